/**
 * The kubelet server's /debug endpoints (upstream InstallDebuggingHandlers'
 * /debug/flags/v and /debug/pprof), behind enableDebuggingHandlers and
 * authenticated like every route of the main server:
 * - GET /debug/flags/v: the current verbosity; PUT with a number as body
 *   sets it at run time (enableDebugFlagsHandler). At most
 *   MAX_FLAG_BODY_BYTES of the body are read (upstream reads it all); a
 *   longer one is invalid and its connection closed. An invalid value is
 *   echoed up to ECHO_BYTES, with its size when it is cut.
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

/** A verbosity is a few digits: reading a PUT body stops past this. */
const MAX_FLAG_BODY_BYTES = 1024;
/** The most of an invalid value echoed back. */
const ECHO_BYTES = 100;

/** The body's first `max` bytes, and whether that is all of it (else the rest is left unread). */
function readBody(req: IncomingMessage, max: number): Promise<{ head: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (complete: boolean) => {
      req.off('data', onData).off('end', onEnd).off('error', reject);
      resolve({ head: Buffer.concat(chunks), complete });
    };
    const onData = (chunk: Buffer) => {
      if (size < max) chunks.push(chunk.subarray(0, max - size));
      size += chunk.length;
      if (size <= max) return;
      req.pause();
      finish(false);
    };
    const onEnd = () => finish(true);
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** An invalid value as JSON, cut at ECHO_BYTES with its size (the declared length when it was not all read). */
function echo(head: Buffer, complete: boolean, contentLength: string | undefined): string {
  if (complete && head.length <= ECHO_BYTES) return JSON.stringify(head.toString('utf8').trim());
  const size = complete
    ? `${head.length} bytes`
    : /^[0-9]+$/.test(contentLength ?? '')
      ? `${contentLength} bytes`
      : `more than ${MAX_FLAG_BODY_BYTES} bytes`;
  return `${JSON.stringify(head.subarray(0, ECHO_BYTES).toString('utf8'))}… (${size})`;
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
      const { head, complete } = await readBody(req, MAX_FLAG_BODY_BYTES);
      const text = head.toString('utf8').trim();
      const v = Number(text);
      if (!complete || !/^[0-9]+$/.test(text) || !Number.isSafeInteger(v)) {
        if (!complete) res.setHeader('connection', 'close');
        send(res, 400, `invalid verbosity ${echo(head, complete, req.headers['content-length'])}: want a non-negative integer\n`);
        return true;
      }
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
