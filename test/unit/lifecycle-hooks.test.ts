import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodSchema, type Container, type Pod } from '../../src/api/pod.js';
import { newRequestForHttpGetAction } from '../../src/handlers/http-get.js';
import { runHandler } from '../../src/workers/sync/lifecycle-hooks.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeCri } from '../fakes/fake-cri.js';

const pod: Pod = PodSchema.parse({ metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [] } });
const container: Container = { name: 'app', ports: [{ name: 'http', containerPort: 8080 }] };

describe('httpGet lifecycle hooks (upstream runHTTPHandler)', () => {
  const seen: IncomingMessage[] = [];
  let port = 0;
  const server = createServer((req, res) => {
    seen.push(req);
    res.statusCode = req.url === '/fail' ? 500 : 200;
    res.end('body');
  });
  beforeAll(() => new Promise<void>((r) => server.listen(0, '127.0.0.1', () => ((port = (server.address() as AddressInfo).port), r()))));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const ctx = () => ({ cri: new FakeCri().api, clock: new FakeClock() });

  it('GETs the pod IP (or host) and port with the headers; a 500 is not a failure, as upstream', async () => {
    const r = await runHandler(
      ctx(),
      pod,
      container,
      'c1',
      { httpGet: { path: 'fail', port, httpHeaders: [{ name: 'X-A', value: 'b' }] } },
      '127.0.0.1',
    );
    expect(r).toEqual({ ok: true });
    expect(seen.at(-1)!.url).toBe('/fail');
    expect(seen.at(-1)!.headers['x-a']).toBe('b');
    expect(seen.at(-1)!.headers['user-agent']).toMatch(/^kube-lifecycle\//);
  });

  it('a named port resolves through the container ports', () => {
    expect(newRequestForHttpGetAction({ port: 'http', path: '/x' }, container, '10.0.0.1', 'lifecycle').url.href).toBe(
      'http://10.0.0.1:8080/x',
    );
    expect(newRequestForHttpGetAction({ port: 80, host: 'fd00::1', scheme: 'HTTPS' }, container, '10.0.0.1', 'lifecycle').url.href).toBe(
      'https://[fd00::1]:80/',
    );
  });

  it('a refused connection fails with upstream’s message', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await runHandler(ctx(), pod, container, 'c1', { httpGet: { path: '/hook', port: deadPort } }, '127.0.0.1');
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.message).toMatch(
      /^HTTP lifecycle hook \(\/hook\) for Container "app" in Pod "web_default\(u1\)" failed - error: /,
    );
  });

  it('a sleep hook sleeps on the injected clock', async () => {
    const c = ctx();
    let done = false;
    const p = runHandler(c, pod, container, 'c1', { sleep: { seconds: 5 } }, '').then(() => (done = true));
    await Promise.resolve();
    c.clock.step(4_999);
    await Promise.resolve();
    expect(done).toBe(false);
    c.clock.step(1);
    await p;
    expect(done).toBe(true);
  });
});
