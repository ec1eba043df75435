/**
 * Which dead containers, sandboxes and pod log directories go (upstream
 * kuberuntime_gc.go GarbageCollect: evictContainers, evictSandboxes,
 * evictPodLogsDirectories). Killing a pod never removes anything; this does,
 * later, so the logs and exit codes of dead containers stay readable for a
 * while.
 *
 *  - Containers: every one that is not running and older than minAge is
 *    evictable, grouped by (pod UID, container name). Once all sources are
 *    ready, every container of a pod whose content may be removed goes;
 *    otherwise each group keeps its newest maxPerPodContainer, and the node
 *    keeps at most maxContainers in total (-1 = no limit).
 *  - Sandboxes: a sandbox is evictable when it is not ready and holds no
 *    container. A removable pod loses all of them; any other pod keeps its
 *    newest sandbox. Each is stopped before it is removed.
 *  - Pod log directories (`<ns>_<name>_<uid>`) of removable pods go once all
 *    sources are ready.
 *
 * This selection runs on the main thread, which asks the pod workers
 * (GcPodState) right after each list, as upstream asks its podStateProvider;
 * listing and removing are the gcList and gcRemove worker tasks.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GcContainer, GcSandbox } from '../../workers/protocol/gc-wire.js';

/** Upstream kubecontainer.GCPolicy with the kubelet's defaults (MinAge 0, MaxPerPodContainer 1, MaxContainers -1). */
export interface GcPolicy {
  minAgeMs: number;
  maxPerPodContainer: number;
  maxContainers: number;
}

export const DEFAULT_GC_POLICY: GcPolicy = Object.freeze({ minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 });
/** upstream ContainerGCPeriod */
export const CONTAINER_GC_PERIOD_MS = 60_000;

export interface GcInput {
  policy: GcPolicy;
  allSourcesReady: boolean;
  /** Upstream podStateProvider.ShouldPodContentBeRemoved. */
  removable: (uid: string) => boolean;
  /** ms since the epoch. */
  now: number;
}

const newestFirst = <T extends { createdAt: bigint }>(a: T, b: T) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0);

/** Upstream evictContainers: the ids to remove, oldest of each group first. */
export function selectContainers(containers: GcContainer[], input: GcInput): string[] {
  const removable = input.removable;
  const newestGC = BigInt(input.now - input.policy.minAgeMs) * 1_000_000n;
  const units = new Map<string, GcContainer[]>();
  for (const c of containers) {
    if (c.running || c.createdAt > newestGC) continue;
    const key = `${c.uid}\u0000${c.name}`;
    const list = units.get(key) ?? [];
    list.push(c);
    units.set(key, list);
  }
  for (const list of units.values()) list.sort(newestFirst);
  const out: string[] = [];
  const removeOldest = (list: GcContainer[], n: number): GcContainer[] => {
    const keep = list.length - n;
    for (let i = list.length - 1; i >= keep; i--) out.push(list[i].id);
    return list.slice(0, keep);
  };
  if (input.allSourcesReady) {
    for (const [key, list] of units) {
      if (!removable(list[0].uid)) continue;
      removeOldest(list, list.length);
      units.delete(key);
    }
  }
  const enforcePerUnit = (max: number) => {
    for (const [key, list] of units) if (list.length > max) units.set(key, removeOldest(list, list.length - max));
  };
  if (input.policy.maxPerPodContainer >= 0) enforcePerUnit(input.policy.maxPerPodContainer);
  const total = () => [...units.values()].reduce((n, l) => n + l.length, 0);
  if (input.policy.maxContainers >= 0 && total() > input.policy.maxContainers) {
    enforcePerUnit(Math.max(1, Math.floor(input.policy.maxContainers / units.size)));
    const left = total();
    if (left > input.policy.maxContainers) {
      const flat = [...units.values()].flat().sort(newestFirst);
      removeOldest(flat, left - input.policy.maxContainers);
    }
  }
  return out;
}

/** Upstream evictSandboxes: the ids of inactive sandboxes to stop and remove. */
export function selectSandboxes(sandboxes: GcSandbox[], containers: GcContainer[], input: GcInput): string[] {
  const removable = input.removable;
  const withContainers = new Set(containers.map((c) => c.sandboxId));
  const byPod = new Map<string, GcSandbox[]>();
  for (const s of sandboxes) byPod.set(s.uid, [...(byPod.get(s.uid) ?? []), s]);
  const out: string[] = [];
  for (const [uid, list] of byPod) {
    list.sort(newestFirst);
    // A pod that still exists keeps its newest sandbox, whatever its state.
    const candidates = removable(uid) ? list : list.slice(1);
    for (const s of candidates) if (!s.ready && !withContainers.has(s.id)) out.push(s.id);
  }
  return out;
}

/** The pod UID of a pod log directory `<namespace>_<name>_<uid>` (upstream parsePodUIDFromLogsDirectory). */
export function podUidOfLogDirectory(name: string): string {
  return name.slice(name.lastIndexOf('_') + 1);
}

/** Pod log directories (`<podLogsDir>/<ns>_<name>_<uid>`) of pods whose content may be removed. */
export function selectLogDirectories(podLogsDir: string, input: Pick<GcInput, 'allSourcesReady' | 'removable'>): string[] {
  if (!input.allSourcesReady || !podLogsDir) return [];
  const removable = input.removable;
  let dirs: string[];
  try {
    dirs = readdirSync(podLogsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
  return dirs.filter((d) => removable(podUidOfLogDirectory(d))).map((d) => join(podLogsDir, d));
}
