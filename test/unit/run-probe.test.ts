import * as grpc from '@grpc/grpc-js';
import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Probe } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { CriDeadlineError, CriError } from '../../src/common/errors.js';
import { decodeHealthCheckResponse, encodeHealthCheckRequest } from '../../src/prober/grpc-probe.js';
import { goDuration } from '../../src/common/go-duration.js';
import { runProbe, type ProbeRunContext, type ProbeTarget } from '../../src/prober/run-probe.js';
import { FakeCri } from '../fakes/fake-cri.js';

const target = (over: Partial<ProbeTarget> = {}): ProbeTarget => ({
  podName: 'web',
  namespace: 'default',
  container: { name: 'app', sidecar: false, ports: [{ name: 'http', containerPort: 8080 }], env: [{ name: 'FILE', value: '/ready' }] },
  containerId: 'c1',
  podIP: '10.1.0.5',
  ...over,
});

function ctxWith(cri: FakeCri, over: Partial<ProbeRunContext> = {}): ProbeRunContext {
  return { cri: cri.api, clock: realClock, runtimeRequestTimeoutMs: 120_000, ...over };
}

describe('exec probes (CRI ExecSync)', () => {
  it('exit 0 succeeds; the command gets static $(VAR) expansion, the timeout, and a deadline of timeout + runtimeRequestTimeout', async () => {
    const cri = new FakeCri();
    cri.handlers.execSync = async () => ({ exitCode: 0, stdout: Buffer.from('ok\n'), stderr: Buffer.alloc(0) });
    const a = await runProbe(ctxWith(cri), 'Readiness', { exec: { command: ['cat', '$(FILE)'] }, timeoutSeconds: 3 }, target());
    expect(a).toEqual({ result: 'Success', outcome: 'success', output: 'ok\n' });
    expect(cri.calls[0]).toEqual({
      method: 'execSync',
      request: { containerId: 'c1', cmd: ['cat', '/ready'], timeout: 3n },
      timeoutMs: 123_000,
    });
  });

  it('non-zero exit: Failure with stdout+stderr and an Unhealthy event', async () => {
    const cri = new FakeCri();
    cri.handlers.execSync = async () => ({ exitCode: 1, stdout: Buffer.from('out '), stderr: Buffer.from('err') });
    const a = await runProbe(ctxWith(cri), 'Liveness', { exec: { command: ['false'] } }, target());
    expect(a).toMatchObject({
      result: 'Failure',
      output: 'out err',
      event: { reason: 'Unhealthy', message: 'Liveness probe failed: out err' },
    });
  });

  it('a timeout (DeadlineExceeded) is a Failure: command "..." timed out', async () => {
    const cri = new FakeCri();
    cri.handlers.execSync = async () => {
      throw new CriDeadlineError('ExecSync: rpc error: code = DeadlineExceeded desc = timeout', 'ExecSync', 4);
    };
    const a = await runProbe(ctxWith(cri), 'Liveness', { exec: { command: ['sleep', '10'] }, timeoutSeconds: 1 }, target());
    expect(a).toMatchObject({
      result: 'Failure',
      output: 'command "sleep 10" timed out',
      event: { message: 'Liveness probe failed: command "sleep 10" timed out' },
    });
  });

  it('a runtime error is retried three times, then the run has no result and an "errored" event', async () => {
    const cri = new FakeCri();
    cri.handlers.execSync = async () => {
      throw new CriError('ExecSync: rpc error: code = Unknown desc = container is in CONTAINER_EXITED state', 'ExecSync', 2);
    };
    const a = await runProbe(ctxWith(cri), 'Readiness', { exec: { command: ['true'] } }, target());
    expect(cri.callsOf('execSync')).toHaveLength(3);
    expect(a.result).toBeUndefined();
    expect(a.event).toEqual({
      reason: 'Unhealthy',
      message:
        'Readiness probe errored and resulted in unknown state: ExecSync: rpc error: code = Unknown desc = container is in CONTAINER_EXITED state',
    });
  });
});

describe('httpGet probes', () => {
  const http =
    (statusCode: number, body = '') =>
    async () => ({ statusCode, body });
  it.each<[number, string, string | undefined, string | undefined]>([
    [200, 'Success', undefined, undefined],
    [399, 'Success', 'ProbeWarning', 'Startup probe warning: Probe terminated redirects, Response body: b'],
    [302, 'Success', 'ProbeWarning', 'Startup probe warning: Probe terminated redirects, Response body: b'],
    [400, 'Failure', 'Unhealthy', 'Startup probe failed: HTTP probe failed with statuscode: 400'],
    [503, 'Failure', 'Unhealthy', 'Startup probe failed: HTTP probe failed with statuscode: 503'],
  ])('status %s → %s', async (code, result, reason, message) => {
    const a = await runProbe(ctxWith(new FakeCri(), { httpGet: http(code, 'b') }), 'Startup', { httpGet: { port: 'http' } }, target());
    expect(a.result).toBe(result);
    expect(a.event).toEqual(reason ? { reason, message } : undefined);
  });

  it('targets the pod IP and the named port, with the probe timeout', async () => {
    let seen = '';
    let timeout = 0;
    const ctx = ctxWith(new FakeCri(), {
      httpGet: async (r, t) => {
        seen = r.url.href;
        timeout = t;
        return { statusCode: 200, body: '' };
      },
    });
    await runProbe(ctx, 'Readiness', { httpGet: { port: 'http', path: '/healthz' }, timeoutSeconds: 2 }, target());
    expect([seen, timeout]).toEqual(['http://10.1.0.5:8080/healthz', 2000]);
  });

  it('an unknown named port is a handler error (no result)', async () => {
    const a = await runProbe(ctxWith(new FakeCri(), { httpGet: http(200) }), 'Readiness', { httpGet: { port: 'nope' } }, target());
    expect(a.result).toBeUndefined();
    expect(a.error).toBe('strconv.Atoi: parsing "nope": invalid syntax');
  });

  it('a connection failure is a Failure with Go wording', async () => {
    const a = await runProbe(ctxWith(new FakeCri()), 'Readiness', { httpGet: { port: 1, host: '127.0.0.1' }, timeoutSeconds: 2 }, target());
    expect(a).toMatchObject({ result: 'Failure', output: 'Get "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused' });
  });
});

describe('tcpSocket probes', () => {
  let server: TcpServer;
  let port = 0;
  beforeAll(async () => {
    server = createTcpServer((s) => s.on('error', () => undefined));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it('connects: Success; refused: Failure with the dial error', async () => {
    const ok = await runProbe(ctxWith(new FakeCri()), 'Liveness', { tcpSocket: { port, host: '127.0.0.1' } }, target());
    expect(ok).toEqual({ result: 'Success', outcome: 'success', output: '' });
    const no = await runProbe(ctxWith(new FakeCri()), 'Liveness', { tcpSocket: { port: 1 } }, target({ podIP: '127.0.0.1' }));
    expect(no).toMatchObject({ result: 'Failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' });
  });
});

describe('grpc probes (grpc.health.v1.Health/Check)', () => {
  let server: grpc.Server;
  let port = 0;
  const statuses: Record<string, number> = { '': 1, sick: 2 };
  beforeAll(async () => {
    server = new grpc.Server();
    server.addService(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestDeserialize: (b: Buffer) => {
            const r = new BinaryReader(b);
            let service = '';
            while (r.pos < r.len) {
              const [f, w] = r.tag();
              if (f === 1) service = r.string();
              else r.skip(w);
            }
            return { service };
          },
          responseSerialize: (s: number) => Buffer.from(new BinaryWriter().uint32(8).int32(s).finish()),
          requestSerialize: () => Buffer.alloc(0),
          responseDeserialize: () => 0,
        },
      },
      {
        Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, cb: grpc.sendUnaryData<number>) => {
          const s = statuses[call.request.service];
          if (s === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
          else cb(null, s);
        },
      },
    );
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
  });
  afterAll(() => server.forceShutdown());

  const grpcProbe = (service: string | undefined, p = port): Probe => ({
    grpc: { port: p, ...(service !== undefined && { service }) },
    timeoutSeconds: 1,
  });

  it('SERVING succeeds; NOT_SERVING and errors fail with upstream messages', async () => {
    const t = target({ podIP: '127.0.0.1' });
    const ctx = ctxWith(new FakeCri());
    expect(await runProbe(ctx, 'Readiness', grpcProbe(undefined), t)).toEqual({
      result: 'Success',
      outcome: 'success',
      output: 'service healthy',
    });
    expect(await runProbe(ctx, 'Readiness', grpcProbe('sick'), t)).toMatchObject({
      result: 'Failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    expect(await runProbe(ctx, 'Readiness', grpcProbe('other'), t)).toMatchObject({
      result: 'Failure',
      output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    });
    expect(await runProbe(ctx, 'Readiness', grpcProbe(undefined, 1), t)).toMatchObject({
      result: 'Failure',
      output: 'timeout: failed to connect service "127.0.0.1:1" within 1s: context deadline exceeded',
    });
  });

  it('messages encode as the health proto', () => {
    expect([...encodeHealthCheckRequest('')]).toEqual([]);
    expect([...encodeHealthCheckRequest('a')]).toEqual([10, 1, 97]);
    expect(decodeHealthCheckResponse(new Uint8Array([8, 2]))).toBe(2);
    expect(decodeHealthCheckResponse(new Uint8Array([]))).toBe(0);
  });
});

describe('goDuration', () => {
  it.each([
    [1000, '1s'],
    [500, '500ms'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
  ])('%s ms → %s', (ms, s) => expect(goDuration(ms)).toBe(s));
});
