import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { realClock } from '../../src/common/clock.js';
import { HttpSource } from '../../src/main/podconfig/http-source.js';
import { PodConfig } from '../../src/main/podconfig/pod-config.js';
import type { PodUpdate } from '../../src/main/podconfig/types.js';
import { waitFor } from '../helpers/wait-for.js';

const pod = (name: string, image = 'nginx:1.25', uid?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(uid ? { uid } : {}) },
  spec: { containers: [{ name: 'c', image }] },
});
const podList = (...items: object[]) => JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items });

interface Fixture {
  url: string;
  server: Server;
  requests: IncomingHttpHeaders[];
  reply: { status: number; body: string | Buffer };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(body: string | Buffer = '', status = 200): Promise<Fixture> {
  const fx = { requests: [] as IncomingHttpHeaders[], reply: { status, body } } as Fixture;
  fx.server = createServer((req, res) => {
    fx.requests.push(req.headers);
    res.statusCode = fx.reply.status;
    res.end(fx.reply.body);
  });
  await new Promise<void>((r) => fx.server.listen(0, '127.0.0.1', r));
  fx.url = `http://127.0.0.1:${(fx.server.address() as AddressInfo).port}/pods`;
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        fx.server.closeAllConnections();
        fx.server.close(() => r());
      }),
  );
  return fx;
}

function start(url: string, opts: { headers?: Record<string, string | string[]>; checkFrequencyMs?: number; timeoutMs?: number } = {}) {
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _e, cb) {
        logs.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        cb();
      },
    }),
  );
  const registry = new Registry();
  const config = new PodConfig({ clock: realClock, logger });
  const source = new HttpSource({
    url,
    headers: opts.headers,
    nodeName: 'node1',
    clock: realClock,
    logger,
    registry,
    checkFrequencyMs: opts.checkFrequencyMs ?? 20,
    ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
  });
  const got: PodUpdate[] = [];
  // Ends when config.stop() closes the queue; awaited by the cleanup.
  const consumed = (async () => {
    for await (const u of config.updates) got.push(u);
  })();
  const h = { config, source, got, logs, registry, sets: 0 };
  const ch = config.channel(source.name);
  const ctl = new AbortController();
  source.start(ctl.signal, (u) => {
    h.sets++;
    ch(u);
  });
  cleanups.push(async () => {
    ctl.abort();
    config.stop();
    await consumed;
  });
  return h;
}

const ops = (got: PodUpdate[]) => got.map((u) => `${u.op}:${u.pods.map((p) => p.metadata.name).join(',')}`);

describe('HttpSource', () => {
  it('reads a single Pod and sends the configured headers', async () => {
    const fx = await serve(JSON.stringify(pod('web')));
    const h = start(fx.url, { headers: { 'X-Kubelet-Test': 'yes', Authorization: 'Bearer t0k', 'X-Multi': ['a', 'b'] } });
    await waitFor(() => ops(h.got).includes('ADD:web-node1'));
    expect(h.got[0].source).toBe('http');
    expect(h.got[0].pods[0].spec.tolerations).toBeUndefined();
    expect(fx.requests[0]).toMatchObject({ 'x-kubelet-test': 'yes', authorization: 'Bearer t0k', 'x-multi': 'a, b' });
  });

  it('reads a PodList (YAML too)', async () => {
    const fx = await serve(podList(pod('a'), pod('b')));
    const h = start(fx.url);
    await waitFor(() => ops(h.got).includes('ADD:a-node1,b-node1'));
    fx.reply.body =
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: "nginx:1.25"}]}}\n';
    await waitFor(() => ops(h.got).includes('REMOVE:b-node1'));
    expect(ops(h.got)).toEqual(['ADD:a-node1,b-node1', 'REMOVE:b-node1']);
  });

  it('short-circuits an unchanged body: many polls, one SET', async () => {
    const fx = await serve(JSON.stringify(pod('web')));
    const h = start(fx.url);
    await waitFor(() => fx.requests.length >= 6, { what: 'six polls' });
    expect(h.sets).toBe(1);
    expect(ops(h.got)).toEqual(['ADD:web-node1']);
  });

  it('an empty body sends an empty SET (source seen) and removes earlier pods', async () => {
    const fx = await serve('');
    const h = start(fx.url);
    await waitFor(() => h.config.seenAllSources());
    expect(ops(h.got)).toEqual(['ADD:']);
    expect(h.logs.some((l) => String((l['err'] as { message?: string } | undefined)?.message).includes('zero-length data received'))).toBe(
      true,
    );
    fx.reply.body = JSON.stringify(pod('web'));
    await waitFor(() => ops(h.got).includes('ADD:web-node1'));
    fx.reply.body = '';
    await waitFor(() => ops(h.got).includes('REMOVE:web-node1'));
    fx.reply.body = JSON.stringify(pod('web'));
    await waitFor(() => ops(h.got).filter((o) => o === 'ADD:web-node1').length === 2, { what: 'same body re-added after an empty one' });
  });

  it('rejects a body over 10 MiB with a clear error and sends nothing', async () => {
    const fx = await serve(Buffer.alloc(11 * 1024 * 1024, 0x20));
    const h = start(fx.url, { checkFrequencyMs: 60_000 });
    await waitFor(() => h.logs.some((l) => l['level'] === 40));
    const err = h.logs.find((l) => l['level'] === 40)!['err'] as { message: string };
    expect(err.message).toMatch(/\/pods: response body exceeds the 10485760-byte limit/);
    expect(h.sets).toBe(0);
    expect(await h.registry.getSingleMetricAsString('kubelet_ts_static_pod_manifest_errors_total')).toContain('{source="http"} 1');
  });

  it('a URL that streams 1 GB is cut off at 10 MiB: the transfer is aborted, nothing is sent', async () => {
    let served = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(1e9) });
      const chunk = Buffer.alloc(1 << 16, 0x20);
      const pump = () => {
        while (served < 1e9 && res.write(chunk)) served += chunk.length;
      };
      res.on('drain', pump);
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const h = start(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`, { checkFrequencyMs: 60_000 });
    await waitFor(() => h.logs.some((l) => l['level'] === 40));
    const err = h.logs.find((l) => l['level'] === 40)!['err'] as { message: string };
    expect(err.message).toMatch(/\/pods: response body exceeds the 10485760-byte limit; serve a smaller pod list/);
    expect(h.sets).toBe(0);
    // The socket buffers hold a few MiB beyond what was read; nowhere near the gigabyte.
    expect(served).toBeLessThan(64 << 20);
  });

  it('a URL that never answers is given up after the timeout and reported', async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
    const t0 = Date.now();
    const h = start(url, { checkFrequencyMs: 100, timeoutMs: 500 });
    await waitFor(() => h.logs.some((l) => l['level'] === 40), { what: 'the timeout reported' });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(JSON.stringify(h.logs.find((l) => l['level'] === 40))).toContain(`${url}: no response within 500 ms`);
    expect(h.sets).toBe(0);
  });

  it('an invalid body keeps the previous pods and is reported', async () => {
    const fx = await serve(JSON.stringify(pod('web')));
    const h = start(fx.url);
    await waitFor(() => ops(h.got).includes('ADD:web-node1'));
    fx.reply.body = JSON.stringify(pod('Bad_Name'));
    await waitFor(() =>
      h.logs.some((l) => String((l['err'] as { message?: string } | undefined)?.message).includes('invalid pod: metadata.name')),
    );
    expect(ops(h.got)).toEqual(['ADD:web-node1']);
    expect(h.config.mergedState().map((p) => p.metadata.name)).toEqual(['web-node1']);
  });

  it('server failures: throttled logs, pods kept, recovery logged once', async () => {
    const fx = await serve(JSON.stringify(pod('web')));
    const h = start(fx.url, { checkFrequencyMs: 10 });
    await waitFor(() => ops(h.got).includes('ADD:web-node1'));
    fx.reply.status = 500;
    await waitFor(() => h.source.consecutiveFailures >= 8, { what: 'eight failures' });
    const failures = h.logs.filter((l) => String(l['msg']).startsWith('Failed to read pods from URL'));
    expect(failures.slice(0, 3).every((l) => l['level'] === 40)).toBe(true);
    expect(failures[3]).toMatchObject({ level: 40, msg: 'Failed to read pods from URL. Dropping verbosity of this message to debug' });
    expect(failures.slice(4).every((l) => l['level'] === 20)).toBe(true);
    expect((failures[0]['err'] as { message: string }).message).toMatch(/\/pods: 500 Internal Server Error/);
    expect(ops(h.got)).toEqual(['ADD:web-node1']);
    fx.reply.status = 200;
    await waitFor(() => h.logs.some((l) => l['msg'] === 'Successfully read pods from URL'));
    expect(h.source.consecutiveFailures).toBe(0);
    expect(ops(h.got)).toEqual(['ADD:web-node1']);
  });

  it('connection refused is a failure like any other', async () => {
    const fx = await serve('');
    const url = fx.url;
    await new Promise<void>((r) => fx.server.close(() => r()));
    const h = start(url, { checkFrequencyMs: 10 });
    await waitFor(() => h.source.consecutiveFailures >= 2);
    expect(h.got).toEqual([]);
    expect(h.config.seenAllSources()).toBe(false);
  });
});

describe('HttpSource through PodConfig.addSource', () => {
  it('ADD, UPDATE, REMOVE sequence', async () => {
    const fx = await serve(podList(pod('a', 'nginx:1', 'uid-a'), pod('b', 'nginx:1', 'uid-b')));
    const logger = pino({ level: 'silent' });
    const config = new PodConfig({ clock: realClock, logger });
    cleanups.push(() => config.stop());
    config.addSource(
      new HttpSource({ url: fx.url, nodeName: 'node1', clock: realClock, logger, registry: new Registry(), checkFrequencyMs: 20 }),
    );
    const got: PodUpdate[] = [];
    const consumer = (async () => {
      for await (const u of config.updates) got.push(u);
    })();
    await waitFor(() => got.length >= 1);
    fx.reply.body = podList(pod('a', 'nginx:2', 'uid-a'), pod('b', 'nginx:1', 'uid-b'));
    await waitFor(() => got.length >= 2);
    fx.reply.body = podList(pod('a', 'nginx:2', 'uid-a'));
    await waitFor(() => got.length >= 3);
    expect(ops(got)).toEqual(['ADD:a-node1,b-node1', 'UPDATE:a-node1', 'REMOVE:b-node1']);
    expect(config.seenAllSources(['http'])).toBe(true);
    expect(config.seenAllSources([])).toBe(false);
    config.stop();
    await consumer;
  });
});
