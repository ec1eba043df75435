/**
 * What a request to the kubelet server is, for authorization and metrics
 * (upstream pkg/kubelet/server auth.go GetRequestAttributes and server.go's
 * metric buckets).
 *
 * Authorization: every path maps to the `nodes` resource (version v1, no
 * namespace, the node's name), verb from the method (GET get, POST create,
 * PUT update, PATCH patch, DELETE delete), subresource by path: /stats/…
 * stats, /metrics… metrics, /logs/… log, /spec/… spec, anything else proxy.
 */
export interface NodeRequestAttributes {
  verb: string;
  namespace: '';
  group: '';
  version: 'v1';
  resource: 'nodes';
  subresource: string;
  name: string;
  path: string;
}

const VERBS: Record<string, string> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** Upstream isSubpath: `path` equals `prefix` (without a trailing slash) or continues it at a slash. */
export function isSubpath(path: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return path === p || (path.startsWith(p) && path[p.length] === '/');
}

export function nodeRequestAttributes(method: string, path: string, nodeName: string): NodeRequestAttributes {
  let subresource = 'proxy';
  if (isSubpath(path, '/stats/')) subresource = 'stats';
  else if (isSubpath(path, '/metrics')) subresource = 'metrics';
  else if (isSubpath(path, '/logs/')) subresource = 'log';
  else if (isSubpath(path, '/spec/')) subresource = 'spec';
  return { verb: VERBS[method] ?? '', namespace: '', group: '', version: 'v1', resource: 'nodes', subresource, name: nodeName, path };
}

/** Paths of the server's route groups, as upstream's metric buckets name them. */
const BUCKETS = new Set([
  'healthz',
  'pods',
  'stats',
  'metrics',
  'logs',
  'containerLogs',
  'runningpods',
  'configz',
  'spec',
  'run',
  'exec',
  'attach',
  'portForward',
  'debug',
  'cri',
  'checkpoint',
]);
const LONG_RUNNING = new Set(['exec', 'attach', 'portForward', 'debug']);
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * The `path` label of kubelet_http_* (upstream getMetricBucket): the first
 * path segment when it is one of the server's, "metrics/<x>" below /metrics,
 * and "other" for anything else, so that random paths cannot grow the series.
 */
export function metricPath(path: string): string {
  const parts = path.replace(/^\//, '').split('/');
  const first = parts[0] ?? '';
  if (!BUCKETS.has(first)) return 'other';
  if (first === 'metrics' && parts.length > 1 && parts[1]) {
    return ['cadvisor', 'probes', 'resource'].includes(parts[1]) ? `metrics/${parts[1]}` : 'other';
  }
  return first;
}

export function metricMethod(method: string): string {
  return METHODS.has(method) ? method : 'other';
}

export function isLongRunning(bucket: string): boolean {
  return LONG_RUNNING.has(bucket);
}
