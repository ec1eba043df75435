/**
 * The kubelet server's /debug endpoints (upstream InstallDebuggingHandlers'
 * /debug/flags/v and /debug/pprof), behind enableDebuggingHandlers and
 * authenticated like every route of the main server:
 * - GET /debug/flags/v: the current verbosity; PUT with a number as body
 *   sets it at run time (enableDebugFlagsHandler).
 * - /debug/pprof/profile?seconds=N (default 30, 1-300): a CPU profile of the
 *   main thread, V8's .cpuprofile JSON (open it in Chrome DevTools or
 *   speedscope; it is not Go's pprof protobuf) (enableProfilingHandler).
 * - /debug/pprof/heap?seconds=N (default 10): a sampling heap profile of the
 *   main thread (.heapprofile JSON); with ?worker=I, a heap snapshot
 *   (.heapsnapshot) of worker thread I.
 * One profile runs at a time (409 otherwise).
 */
import { Session } from 'node:inspector/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface DebugHost {
  verbosity(): number;
  setVerbosity(v: number): void;
  /** Heap snapshot of worker thread `index`; undefined when there is no such worker. */
  workerHeapSnapshot(index: number): Promise<Readable> | undefined;
  workerCount(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface DebugSwitches {
  flags: boolean;
  profiling: boolean;
}

let profiling = false;

function send(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 64) break;
  }
  return body;
}

function seconds(query: URLSearchParams, def: number): number | undefined {
  const raw = query.get('seconds');
  if (raw === null) return def;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 300 ? n : undefined;
}

async function withSession<T>(fn: (s: Session) => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  try {
    return await fn(session);
  } finally {
    session.disconnect();
  }
}

/** Handles a /debug/ path; false when it is not one of them (404). */
export async function routeDebug(
  host: DebugHost,
  on: DebugSwitches,
  method: string,
  path: string,
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<boolean> {
  if (path === '/debug/flags/v' && on.flags) {
    if (method === 'PUT') {
      const text = (await readBody(req)).trim();
      const v = Number(text);
      if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(v)) return (send(res, 400, `invalid verbosity ${JSON.stringify(text)}\n`), true);
      host.setVerbosity(v);
      send(res, 200, `successfully set klog.logging.verbosity to ${v}`);
    } else if (method === 'GET' || method === 'HEAD') send(res, 200, String(host.verbosity()));
    else send(res, 405, 'method not allowed\n');
    return true;
  }
  if (!path.startsWith('/debug/pprof') || !on.profiling) return false;
  if (method !== 'GET' && method !== 'HEAD') return (send(res, 405, 'method not allowed\n'), true);
  if (path === '/debug/pprof' || path === '/debug/pprof/') {
    send(
      res,
      200,
      `profile?seconds=N  CPU profile of the main thread (.cpuprofile)\nheap?seconds=N     sampling heap profile of the main thread (.heapprofile)\nheap?worker=I      heap snapshot of worker thread I (0..${host.workerCount() - 1})\n`,
    );
    return true;
  }
  const kind = path === '/debug/pprof/profile' ? 'cpu' : path === '/debug/pprof/heap' ? 'heap' : undefined;
  if (!kind) return false;
  const worker = query.get('worker');
  if (worker !== null && kind === 'cpu') {
    send(
      res,
      501,
      'CPU profiles of worker threads are not available on Node 20 (Worker.startCpuProfile); use ?worker= with /debug/pprof/heap\n',
    );
    return true;
  }
  const secs = seconds(query, kind === 'cpu' ? 30 : 10);
  if (secs === undefined) return (send(res, 400, 'seconds must be an integer from 1 to 300\n'), true);
  if (profiling) return (send(res, 409, 'a profile is already being taken\n'), true);
  profiling = true;
  try {
    if (worker !== null) {
      const snapshot = /^[0-9]+$/.test(worker) ? host.workerHeapSnapshot(Number(worker)) : undefined;
      if (!snapshot) return (send(res, 404, `no worker thread ${JSON.stringify(worker)} (0..${host.workerCount() - 1})\n`), true);
      res.setHeader('content-type', 'application/json');
      res.setHeader('content-disposition', `attachment; filename="worker-${worker}.heapsnapshot"`);
      await pipeline(await snapshot, res);
      return true;
    }
    const body = await withSession(async (s) => {
      if (kind === 'cpu') {
        await s.post('Profiler.enable');
        await s.post('Profiler.start');
        await host.sleep(secs * 1000, signal).catch(() => undefined);
        return JSON.stringify((await s.post('Profiler.stop')).profile);
      }
      await s.post('HeapProfiler.enable');
      await s.post('HeapProfiler.startSampling');
      await host.sleep(secs * 1000, signal).catch(() => undefined);
      const profile = (await s.post('HeapProfiler.getSamplingProfile')).profile;
      await s.post('HeapProfiler.stopSampling');
      return JSON.stringify(profile);
    });
    res.setHeader('content-type', 'application/json');
    res.setHeader('content-disposition', `attachment; filename="main.${kind === 'cpu' ? 'cpuprofile' : 'heapprofile'}"`);
    res.end(body);
    return true;
  } finally {
    profiling = false;
  }
}
