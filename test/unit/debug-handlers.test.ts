import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { routeDebug, type DebugHost } from '../../src/main/server/debug-handlers.js';

function host(): DebugHost & { level: number } {
  const h = {
    level: 0,
    verbosity: () => h.level,
    setVerbosity: (v: number) => void (h.level = v),
    workerHeapSnapshot: () => undefined,
    workerCount: () => 0,
    sleep: async () => undefined,
  };
  return h;
}

/** A request whose body is `size` bytes of `fill`, produced on demand in 64 KiB chunks; `read` counts what was taken. */
function putRequest(body: string | { fill: string; size: number }, headers: Record<string, string> = {}) {
  const state = { read: 0 };
  const chunks = function* () {
    if (typeof body === 'string') {
      state.read += body.length;
      yield Buffer.from(body);
      return;
    }
    for (let left = body.size; left > 0; left -= 65_536) {
      const n = Math.min(left, 65_536);
      state.read += n;
      yield Buffer.alloc(n, body.fill);
    }
  };
  return { req: Object.assign(Readable.from(chunks(), { objectMode: false }), { headers }) as unknown as IncomingMessage, state };
}

function response() {
  const r = {
    status: 0,
    headers: {} as Record<string, string>,
    body: '',
    set statusCode(s: number) {
      r.status = s;
    },
    setHeader: (k: string, v: string) => void (r.headers[k] = v),
    end: (b?: string) => void (r.body = String(b ?? '')),
  };
  return r;
}

async function put(h: DebugHost, req: IncomingMessage) {
  const res = response();
  const on = { flags: true, profiling: false };
  const handled = await routeDebug(
    h,
    on,
    'PUT',
    '/debug/flags/v',
    new URLSearchParams(),
    req,
    res as unknown as ServerResponse,
    new AbortController().signal,
  );
  expect(handled).toBe(true);
  return res;
}

describe('PUT /debug/flags/v', () => {
  it('sets the verbosity', async () => {
    const h = host();
    const res = await put(h, putRequest('4\n').req);
    expect([res.status, res.body, h.level]).toEqual([200, 'successfully set klog.logging.verbosity to 4', 4]);
  });

  it('a short invalid value is echoed whole', async () => {
    const res = await put(host(), putRequest('lots').req);
    expect([res.status, res.body]).toEqual([400, 'invalid verbosity "lots": want a non-negative integer\n']);
  });

  it('a long invalid value: at most 100 bytes of it and its size', async () => {
    const res = await put(host(), putRequest('9'.repeat(900) + 'x').req);
    expect([res.status, res.body]).toEqual([400, `invalid verbosity "${'9'.repeat(100)}"… (901 bytes): want a non-negative integer\n`]);
  });

  it('a 200 MB body: the echo is bounded, the rest is not read and the connection is closed', async () => {
    const size = 200 * 1024 * 1024;
    const { req, state } = putRequest({ fill: '7', size }, { 'content-length': String(size) });
    const h = host();
    const res = await put(h, req);
    expect(res.status).toBe(400);
    expect(res.body).toBe(`invalid verbosity "${'7'.repeat(100)}"… (${size} bytes): want a non-negative integer\n`);
    expect(res.headers['connection']).toBe('close');
    expect(state.read).toBeLessThan(1024 * 1024);
    expect(h.level).toBe(0);
    const chunked = await put(host(), putRequest({ fill: '7', size: 5 * 65_536 }).req);
    expect(chunked.body).toBe(`invalid verbosity "${'7'.repeat(100)}"… (more than 1024 bytes): want a non-negative integer\n`);
  });
});
