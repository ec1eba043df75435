/**
 * What a sync just created goes into the pod's status cache entry, so the
 * relist that first lists it reuses it (inspection keeps a cached status whose
 * listed state is unchanged) instead of reading it again, and the status the
 * sync reports when it ends already shows it.
 *
 * Every entry written here is timestamped before the sync ends, so the pod's
 * next sync does not trust it (upstream GetNewerThan(lastSyncTime)). An entry
 * an inspection wrote meanwhile wins: the sandbox is not written over it, and
 * a started container only goes into it where it shows that container in an
 * earlier state. Best effort: a failed write or read changes nothing but the
 * relist's work.
 */
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import { containerState, toContainerStatus, withLaterStates } from '../../runtime/convert.js';
import { CONTAINER_STATE_RANK, type ContainerStatus, type PodStatus, type SandboxStatus } from '../../runtime/types.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';

export interface PublishContext {
  cri: CriApi;
  cache: PodStatusCache;
  clock: Clock;
}

/** A container this sync created and started (its post-start hook, if any, passed). */
export interface StartedContainer {
  id: string;
  sandboxId: string;
}

/**
 * The sandbox this sync just created, with the status it read for the pod
 * IPs, on top of `base` (the status the sync started from), unless the slot
 * holds a newer entry. Returns the entry written (undefined: none).
 */
export function publishCreatedSandbox(ctx: PublishContext, slot: number, base: PodStatus, sandbox: SandboxStatus): PodStatus | undefined {
  if (slot < 0) return undefined;
  const next = { ...base, ips: sandbox.ips, sandboxStatuses: [sandbox, ...base.sandboxStatuses], timestamp: ctx.clock.now() };
  try {
    return ctx.cache.write(slot, next, { ifNoNewerThan: base.timestamp }) ? next : undefined;
  } catch {
    return undefined; // a full slot or one freed meanwhile: the relist's inspection reads the sandbox as usual
  }
}

/**
 * The containers this sync started, each read once with ContainerStatus
 * unless the cache entry already shows it running (a relist read it first).
 * Only those read as running are written: one that already exited is left to
 * the relist, whose inspection adds its termination message. They go into
 * the current entry when it is newer than `base` (an inspection wrote
 * meanwhile), replacing only what it shows in an earlier state (a container
 * moves created → running → exited), else on top of `base`; a write that
 * meets another is retried on the entry that won. A sync that stopped
 * anything its status shows up must not call this (`base` would still show
 * it running).
 */
export async function publishStartedContainers(
  ctx: PublishContext,
  slot: number,
  base: PodStatus,
  started: readonly StartedContainer[],
): Promise<void> {
  if (slot < 0 || started.length === 0) return;
  const current = () => {
    try {
      const entry = ctx.cache.read(slot, base.uid);
      return entry && entry.timestamp >= base.timestamp ? entry : base;
    } catch {
      return base;
    }
  };
  const seen = new Map(current().containerStatuses.map((s) => [s.id, CONTAINER_STATE_RANK[s.state]]));
  const toRead = started.filter(({ id }) => (seen.get(id) ?? -1) < CONTAINER_STATE_RANK.running);
  const timestamp = ctx.clock.now();
  const read = await Promise.all(
    toRead.map(({ id, sandboxId }) =>
      ctx.cri.containerStatus({ containerId: id }).then(
        (r): ContainerStatus | undefined =>
          r.status && containerState(r.status.state) === 'running' ? toContainerStatus(r.status, sandboxId) : undefined,
        () => undefined,
      ),
    ),
  );
  const running = read.filter((s): s is ContainerStatus => s !== undefined);
  for (let attempt = 0; attempt < 3 && running.length > 0; attempt++) {
    const entry = current();
    const containerStatuses = withLaterStates(entry.containerStatuses, running, (s) => CONTAINER_STATE_RANK[s.state]);
    if (!containerStatuses) return;
    const next = { ...entry, containerStatuses, timestamp: Math.max(entry.timestamp, timestamp) };
    try {
      if (ctx.cache.write(slot, next, { ifNoNewerThan: entry.timestamp })) return;
    } catch {
      return; // a full slot or one freed meanwhile: the relist's inspection reads the pod as usual
    }
  }
}
