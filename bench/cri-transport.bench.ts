/**
 * The CRI client's unary transport (`npm run bench -- cri-transport`): the
 * grpc-js unary path the client used before (grpc.Client.makeUnaryRequest,
 * the same serializer, raw response bytes) against the H2Channel it uses now
 * (src/cri/h2-channel.ts), in one process, against the same runtime and pods.
 *
 * Per runtime (the simulated runtime in a child process with N pods, and
 * containerd with N real `sleep` pods created for the run and removed after):
 * - `list pair`: the relist's ListPodSandbox + ListContainers, issued together,
 *   response bytes not decoded (decode is the same for both transports);
 * - `version`: the smallest call (the per-call overhead).
 * The transports run in alternating blocks (the machine is shared and noisy);
 * per transport: latency mean / p50 / p99 and this process's CPU per call
 * (process.cpuUsage over its blocks), and the h2 / grpc-js ratios.
 * Args: --runtimes sim,containerd  --pods 250  --calls 400 (per transport per op)
 *       --block 50  --containerd-endpoint unix:///run/kubelet-ts-containerd/containerd.sock
 *       --out NAME. Writes bench/results/<out>.{json,md} (default cri-transport).
 */
import * as grpc from '@grpc/grpc-js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CriClient, MAX_MSG_SIZE } from '../src/cri/client.js';
import { H2Channel } from '../src/cri/h2-channel.js';
import * as api from '../src/gen/runtime/v1/api.js';
import * as svc from '../src/cri/grpc-service.js';
import { runRawPod } from '../src/sim/populate.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { startSimProcess } from './lib/sim-process.js';

const RUNTIMES = arg('runtimes', 'sim,containerd').split(',').filter(Boolean);
const PODS = Number(arg('pods', '250'));
const CALLS = Number(arg('calls', '400'));
const BLOCK = Number(arg('block', '50'));
const CD_ENDPOINT = arg('containerd-endpoint', 'unix:///run/kubelet-ts-containerd/containerd.sock');
const OUT = arg('out', 'cri-transport');
const TIMEOUT_MS = 60_000;

type Unary = (path: string, request: Buffer) => Promise<Buffer>;

function grpcJsUnary(socketPath: string): { call: Unary; close(): void } {
  const client = new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MSG_SIZE,
    'grpc.max_send_message_length': MAX_MSG_SIZE,
  });
  const call: Unary = (path, request) =>
    new Promise((resolve, reject) =>
      client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        request,
        new grpc.Metadata(),
        { deadline: new Date(Date.now() + TIMEOUT_MS) },
        (err, bytes) => (err ? reject(err) : resolve(bytes!)),
      ),
    );
  return { call, close: () => client.close() };
}

function h2Unary(socketPath: string): { call: Unary; close(): void } {
  const channel = new H2Channel({ socketPath, maxMessageBytes: MAX_MSG_SIZE });
  return { call: (path, request) => channel.unary(path, request, { timeoutMs: TIMEOUT_MS }), close: () => channel.close() };
}

const SVC = svc.RuntimeServiceService;
const LIST_SANDBOXES = Buffer.from(api.ListPodSandboxRequest.encode(api.ListPodSandboxRequest.fromPartial({})).finish());
const LIST_CONTAINERS = Buffer.from(api.ListContainersRequest.encode(api.ListContainersRequest.fromPartial({})).finish());
const VERSION = Buffer.from(api.VersionRequest.encode(api.VersionRequest.fromPartial({})).finish());

const OPS: Record<string, (u: Unary) => Promise<number>> = {
  'list pair': async (u) => {
    const [s, c] = await Promise.all([u(SVC.listPodSandbox.path, LIST_SANDBOXES), u(SVC.listContainers.path, LIST_CONTAINERS)]);
    return s.length + c.length;
  },
  version: async (u) => (await u(SVC.version.path, VERSION)).length,
};

interface Row {
  runtime: string;
  op: string;
  transport: string;
  calls: number;
  responseBytes: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerCall: number;
}

async function measure(runtime: string, socketPath: string): Promise<Row[]> {
  const transports = { 'grpc-js': grpcJsUnary(socketPath), h2: h2Unary(socketPath) };
  const rows: Row[] = [];
  try {
    for (const [op, run] of Object.entries(OPS)) {
      const lat: Record<string, number[]> = { 'grpc-js': [], h2: [] };
      const cpu: Record<string, number> = { 'grpc-js': 0, h2: 0 };
      let bytes = 0;
      for (const t of Object.values(transports)) for (let i = 0; i < 20; i++) bytes = await run(t.call); // warm-up
      for (let done = 0; done < CALLS; done += BLOCK) {
        for (const [name, t] of Object.entries(transports)) {
          const c0 = process.cpuUsage();
          for (let i = 0; i < BLOCK; i++) {
            const t0 = performance.now();
            await run(t.call);
            lat[name].push(performance.now() - t0);
          }
          const c = process.cpuUsage(c0);
          cpu[name] += c.user + c.system;
        }
      }
      for (const name of Object.keys(transports)) {
        const l = lat[name];
        rows.push({
          runtime,
          op,
          transport: name,
          calls: l.length,
          responseBytes: bytes,
          meanMs: round(l.reduce((a, b) => a + b, 0) / l.length, 3),
          p50Ms: round(percentile(l, 50), 3),
          p99Ms: round(percentile(l, 99), 3),
          cpuUsPerCall: round(cpu[name] / l.length, 1),
        });
      }
      const [g, h] = rows.slice(-2);
      console.log(
        `${runtime} ${op}: grpc-js mean ${g.meanMs} ms cpu ${g.cpuUsPerCall} µs | h2 mean ${h.meanMs} ms cpu ${h.cpuUsPerCall} µs`,
      );
    }
  } finally {
    for (const t of Object.values(transports)) t.close();
  }
  return rows;
}

async function withPods(endpoint: string, count: number, fn: () => Promise<Row[]>): Promise<Row[]> {
  const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 120_000 });
  const sandboxes: string[] = [];
  try {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const i = next++;
        const pod = await runRawPod(cri, {
          uid: `crit-uid-${i}`,
          name: `crit-${i}`,
          containers: [{ name: 'c', command: ['sleep', '3600'] }],
        });
        sandboxes.push(pod.sandboxId);
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    console.log(`${count} pods running on ${endpoint}`);
    return await fn();
  } finally {
    for (const id of sandboxes) {
      await cri.stopPodSandbox({ podSandboxId: id }).catch(() => undefined);
      await cri.removePodSandbox({ podSandboxId: id }).catch(() => undefined);
    }
    cri.close();
  }
}

const rows: Row[] = [];
for (const runtime of RUNTIMES) {
  if (runtime === 'sim') {
    const dir = mkdtempSync(join(tmpdir(), 'kts-crit-'));
    const sim = await startSimProcess(dir, 'none');
    try {
      rows.push(...(await withPods(sim.endpoint, PODS, () => measure('sim', join(dir, 'cri.sock')))));
    } finally {
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  } else if (runtime === 'containerd') {
    const socket = CD_ENDPOINT.replace(/^unix:\/\//, '');
    if (!existsSync(socket)) throw new Error(`containerd socket ${socket} missing: run scripts/containerd.sh up`);
    rows.push(...(await withPods(CD_ENDPOINT, PODS, () => measure('containerd', socket))));
  } else throw new Error(`unknown runtime ${runtime}`);
}

const ratio = (runtime: string, op: string, key: 'meanMs' | 'p99Ms' | 'cpuUsPerCall') => {
  const g = rows.find((r) => r.runtime === runtime && r.op === op && r.transport === 'grpc-js')!;
  const h = rows.find((r) => r.runtime === runtime && r.op === op && r.transport === 'h2')!;
  return round(h[key] / g[key], 2);
};
const md = [
  '# CRI unary transport: grpc-js vs H2Channel',
  '',
  `Machine: ${JSON.stringify(machine())}`,
  '',
  `${PODS} pods (1 container each) on each runtime; ${CALLS} calls per transport per op, in alternating blocks of ${BLOCK}. ` +
    "`list pair` = ListPodSandbox + ListContainers issued together (the relist's lists; bytes not decoded); `version` = the smallest call. " +
    'CPU = this process (client side: the transport, HTTP/2 and socket I/O), per call.',
  '',
  '| runtime | op | transport | calls | response bytes | mean (ms) | p50 (ms) | p99 (ms) | client CPU per call (µs) |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.runtime} | ${r.op} | ${r.transport} | ${r.calls} | ${r.responseBytes} | ${r.meanMs} | ${r.p50Ms} | ${r.p99Ms} | ${r.cpuUsPerCall} |`,
  ),
  '',
  '| runtime | op | h2 / grpc-js mean | p99 | CPU per call |',
  '|---|---|---:|---:|---:|',
  ...[...new Set(rows.map((r) => `${r.runtime}\u0000${r.op}`))].map((k) => {
    const [runtime, op] = k.split('\u0000');
    return `| ${runtime} | ${op} | ${ratio(runtime, op, 'meanMs')} | ${ratio(runtime, op, 'p99Ms')} | ${ratio(runtime, op, 'cpuUsPerCall')} |`;
  }),
];
writeResults(OUT, { machine: machine(), pods: PODS, calls: CALLS, block: BLOCK, rows }, md.join('\n'));
console.log(md.slice(-6).join('\n'));
