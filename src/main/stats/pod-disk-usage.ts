/**
 * What a pod uses on disk outside the runtime (upstream's volume and log
 * stats): each measured volume's directory (emptyDir, configMap, secret,
 * projected, downwardAPI) and each container's log directory, walked by the
 * `diskUsage` pool task (du -x -s -B 1 semantics), never on the main thread.
 * Shared by /stats/summary (server/stats-provider.ts) and the eviction
 * manager's stats (eviction/cri-eviction-stats.ts). A path that does not
 * exist (a volume not set up yet) is absent from the result.
 */
import { join } from 'node:path';
import type { Pod } from '../../api/pod.js';
import { escapePluginName, podDir, podVolumesDir } from '../../pod/pod-dirs.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { DiskUsage } from '../../workers/protocol/stats-wire.js';
import { buildPodLogsDirectory } from '../../pod/log-paths.js';

/** Volume source → the plugin directory its data lives in under the pod's volumes/ dir. */
const PLUGIN_DIRS: [string, string][] = [
  ['emptyDir', 'kubernetes.io/empty-dir'],
  ['configMap', 'kubernetes.io/configmap'],
  ['secret', 'kubernetes.io/secret'],
  ['projected', 'kubernetes.io/projected'],
  ['downwardAPI', 'kubernetes.io/downward-api'],
];

/** The directories of the pod's measured volumes, by volume name. */
export function podVolumePaths(rootDir: string, pod: Pod): Map<string, string> {
  const out = new Map<string, string>();
  const dir = podVolumesDir(podDir(rootDir, pod.metadata.uid ?? ''));
  for (const v of pod.spec.volumes ?? []) {
    const src = v as Record<string, unknown>;
    const plugin = PLUGIN_DIRS.find(([k]) => src[k] !== undefined)?.[1];
    if (plugin) out.set(v.name, join(dir, escapePluginName(plugin), v.name));
  }
  return out;
}

export interface PodDiskUsage {
  /** By volume name: the usage and the volume's directory. */
  volumes: Map<string, DiskUsage>;
  /** By container name. */
  logs: Map<string, DiskUsage>;
}

export async function measurePodDiskUsage(
  runner: Pick<TaskRunner, 'run'>,
  dirs: { rootDir: string; podLogsDir: string },
  pods: Iterable<Pod>,
): Promise<Map<string, PodDiskUsage>> {
  const wanted: { uid: string; kind: 'volumes' | 'logs'; name: string; path: string }[] = [];
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? '';
    for (const [name, path] of podVolumePaths(dirs.rootDir, pod)) wanted.push({ uid, kind: 'volumes', name, path });
    const logs = buildPodLogsDirectory(dirs.podLogsDir, pod);
    for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])])
      wanted.push({ uid, kind: 'logs', name: c.name, path: join(logs, c.name) });
  }
  const du = wanted.length ? await runner.run({ type: 'diskUsage', paths: wanted.map((w) => w.path) }) : [];
  const byPath = new Map(du.map((d) => [d.path, d]));
  const out = new Map<string, PodDiskUsage>();
  for (const w of wanted) {
    let u = out.get(w.uid);
    if (!u) out.set(w.uid, (u = { volumes: new Map(), logs: new Map() }));
    const d = byPath.get(w.path);
    if (d) u[w.kind].set(w.name, d);
  }
  return out;
}
