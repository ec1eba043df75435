/**
 * Where a pod's container logs go, as upstream names them: the pod's log
 * directory under podLogsDir and each container instance's file in it. Used
 * by the sync (the sandbox's log directory, the container's log path) and by
 * log rotation.
 */
import { posix as path } from 'node:path';
import type { Pod } from '../api/pod.js';

/** Upstream BuildPodLogsDirectory: `<podLogsDir>/<namespace>_<name>_<uid>`. */
export function buildPodLogsDirectory(podLogsDir: string, pod: Pod): string {
  const m = pod.metadata;
  return path.join(podLogsDir, `${m.namespace ?? ''}_${m.name ?? ''}_${m.uid ?? ''}`);
}

/** Upstream buildContainerLogsPath: `<container>/<restartCount>.log`, relative to the sandbox log directory. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return `${containerName}/${restartCount}.log`;
}
