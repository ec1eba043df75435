/**
 * GET /containerLogs/{namespace}/{pod}/{container} (upstream
 * server.getContainerLogs and Kubelet.GetKubeletContainerLogs /
 * validateContainerLogStatus): picks the container instance from the pod's
 * status (the running one, or the last terminated; `previous` the one before)
 * and streams its CRI log file with the PodLogOptions of the query.
 */
import type { ServerResponse } from 'node:http';
import type { Pod, PodStatus } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { LogQueryError, logReadOptions, parsePodLogQuery } from '../logs/cri-log.js';
import { readLogs } from '../logs/read-logs.js';
import { errorMessage } from '../../common/error-message.js';

export interface ContainerLogsHost {
  podByName(namespace: string, name: string): Pod | undefined;
  /** The status the kubelet computed for the pod (falls back to the pod's own). */
  statusOf(pod: Pod): PodStatus | undefined;
  /** The container's CRI log path (ContainerStatus log_path). */
  logPath(containerId: string): Promise<string>;
  isRunning(containerId: string): Promise<boolean>;
  clock: Clock;
}

export class ContainerLogsError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Upstream validateContainerLogStatus: the runtime container id whose logs to read. */
export function containerIdForLogs(podName: string, status: PodStatus | undefined, container: string, previous: boolean): string {
  const cs =
    status?.containerStatuses?.find((c) => c.name === container) ?? status?.initContainerStatuses?.find((c) => c.name === container);
  const fail = (msg: string) => new ContainerLogsError(400, msg);
  if (!cs) throw fail(`container "${container}" in pod "${podName}" is not available`);
  const last = cs.lastState?.terminated;
  const { waiting, running, terminated } = cs.state ?? {};
  let id: string | undefined;
  if (previous) {
    if (!last?.containerID) throw fail(`previous terminated container "${container}" in pod "${podName}" not found`);
    id = last.containerID;
  } else if (running) {
    id = cs.containerID;
  } else if (terminated) {
    id = terminated.containerID || last?.containerID;
    if (!id) throw fail(`container "${container}" in pod "${podName}" is terminated`);
  } else if (last) {
    if (!last.containerID) throw fail(`container "${container}" in pod "${podName}" is terminated`);
    id = last.containerID;
  } else if (waiting) {
    const reason = waiting.reason ?? '';
    if (reason === 'ErrImagePull') throw fail(`container "${container}" in pod "${podName}" is waiting to start: image can't be pulled`);
    if (reason === 'ImagePullBackOff') {
      throw fail(`container "${container}" in pod "${podName}" is waiting to start: trying and failing to pull image`);
    }
    throw fail(`container "${container}" in pod "${podName}" is waiting to start: ${reason}`);
  } else {
    throw fail(`container "${container}" in pod "${podName}" is waiting to start - no logs yet`);
  }
  if (!id) throw fail(`container "${container}" in pod "${podName}" is not available`);
  return id.replace(/^[a-z0-9-]+:\/\//, '');
}

/**
 * Resolves when `res` drains or the request ends (`signal`, which the server
 * aborts when the response closes). Each wait removes its listeners, so a
 * long stream holds at most one of each, whatever the number of chunks.
 */
function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    if (signal.aborted) return resolve();
    res.on('drain', done);
    signal.addEventListener('abort', done);
  });
}

/** Serves one request; `parts` are the decoded path segments after /containerLogs/. */
export async function serveContainerLogs(
  host: ContainerLogsHost,
  parts: string[],
  query: URLSearchParams,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const [namespace = '', podName = '', container = ''] = parts;
  const text = (status: number, body: string) => {
    res.statusCode = status;
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(body);
  };
  if (!podName) return text(400, '{"message": "Missing podID."}');
  if (!container) return text(400, '{"message": "Missing container name."}');
  if (!namespace) return text(400, '{"message": "Missing podNamespace."}');
  let q;
  try {
    q = parsePodLogQuery(query);
  } catch (err) {
    if (err instanceof LogQueryError) return text(err.status, err.message);
    throw err;
  }
  const pod = host.podByName(namespace, podName);
  if (!pod) return text(404, `pod "${podName}" does not exist`);
  const inSpec = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].some((c) => c.name === container);
  if (!inSpec) return text(404, `container "${container}" not found in pod "${podName}"`);
  let id: string;
  let path: string;
  try {
    id = containerIdForLogs(podName, host.statusOf(pod), container, q.previous);
    path = await host.logPath(id);
    if (!path) throw new ContainerLogsError(400, `container "${container}" in pod "${podName}" has no log file`);
  } catch (err) {
    return text(err instanceof ContainerLogsError ? err.status : 400, errorMessage(err));
  }
  res.statusCode = 200;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.setHeader('transfer-encoding', 'chunked');
  res.flushHeaders();
  try {
    await readLogs({
      path,
      options: logReadOptions(q, host.clock.now()),
      clock: host.clock,
      signal,
      isRunning: () => host.isRunning(id),
      write: (chunk) => (res.write(chunk) ? Promise.resolve() : drained(res, signal)),
    });
  } catch (err) {
    // Headers are out: the best we can do is end the stream with the reason.
    if (!res.writableEnded) res.write(`\n${errorMessage(err)}\n`);
  }
  res.end();
}
