/**
 * Scale benchmark of the simulated CRI runtime (`npx tsx bench/sim-scale.ts`).
 *
 * The sim runs in a child process (`node --import tsx src/sim/cli.ts`), so
 * server encode and client decode are on different threads, as with a real
 * runtime. The sim is populated over gRPC (32 calls in flight) to 500, 2500
 * and 5000 sandboxes with 2 running containers each, carrying the labels and
 * annotations the kubelet sets. At each size it measures round trips of
 * ListContainers and ListPodSandbox (unfiltered, as PLEG relists):
 *   - decoded: the generated ts-proto client (decode included),
 *   - raw: the same call with an identity deserializer (server + transport only),
 * plus, for reference, what one ts-proto encode of the whole response costs
 * (the per-call server cost the sim avoids by caching encoded items).
 *
 * Writes bench/results/sim-scale.json and bench/results/sim-scale.md.
 * Args: --sizes 500,2500,5000 --calls 50 [--window BYTES] (client grpc-node.flow_control_window;
 * measured: no effect on these round trips)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import * as api from '../src/gen/runtime/v1/api.js';
import * as svc from '../src/cri/grpc-service.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const MAX = 16 * 1024 * 1024;
const CONCURRENCY = 32;

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}
const SIZES = arg('sizes', '500,2500,5000').split(',').map(Number);
const CALLS = Number(arg('calls', '50'));

const WINDOW = Number(arg('window', '0'));
const clientOptions: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX,
  'grpc.max_send_message_length': MAX,
  ...(WINDOW > 0 ? { 'grpc-node.flow_control_window': WINDOW } : {}),
};

type Cb<T> = (err: grpc.ServiceError | null, res: T) => void;
function unary<T>(fn: (md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: Cb<T>) => unknown): Promise<T> {
  return new Promise((resolve, reject) =>
    fn(new grpc.Metadata(), { deadline: Date.now() + 120_000 }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

/** A RuntimeService client whose list responses are not decoded (raw bytes). */
const RawClient = grpc.makeGenericClientConstructor(
  {
    listContainers: { ...svc.RuntimeServiceService.listContainers, responseDeserialize: (b: Buffer) => b },
    listPodSandbox: { ...svc.RuntimeServiceService.listPodSandbox, responseDeserialize: (b: Buffer) => b },
  },
  'runtime.v1.RuntimeService',
);

async function startChild(dir: string): Promise<{ child: ChildProcess; endpoint: string }> {
  const endpoint = `unix://${join(dir, 'cri.sock')}`;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/sim/cli.ts'), '--listen', endpoint, '--log-format', 'json'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new svc.RuntimeServiceClient(endpoint, grpc.credentials.createInsecure());
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sim exited early (${child.exitCode}): ${stderr}`);
    try {
      await unary<api.VersionResponse>((md, o, cb) => client.version({ version: 'v1' }, md, o, cb));
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`sim did not come up: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.close();
  return { child, endpoint };
}

async function pool(n: number, worker: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await worker(i);
    }),
  );
}

async function populatePod(rs: svc.RuntimeServiceClient, i: number, logDir: string): Promise<void> {
  const uid = `0000${i}-aaaa-bbbb-cccc-${String(i).padStart(12, '0')}`;
  const name = `bench-pod-${i}`;
  const labels = { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': uid, app: 'bench' };
  const config = api.PodSandboxConfig.fromPartial({
    metadata: { name, namespace: 'default', uid, attempt: 0 },
    hostname: name,
    logDirectory: join(logDir, `default_${name}_${uid}`),
    labels,
    annotations: { 'kubernetes.io/config.seen': '2026-11-21T22:35:44.527566154Z', 'kubernetes.io/config.source': 'api' },
  });
  const { podSandboxId } = await unary<api.RunPodSandboxResponse>((md, o, cb) =>
    rs.runPodSandbox(api.RunPodSandboxRequest.fromPartial({ config }), md, o, cb),
  );
  for (const cname of ['app', 'sidecar']) {
    const req = api.CreateContainerRequest.fromPartial({
      podSandboxId,
      sandboxConfig: config,
      config: {
        metadata: { name: cname, attempt: 0 },
        image: { image: 'docker.io/kubelet-ts/busybox:1.0' },
        command: ['sleep', '36000'],
        logPath: `${cname}/0.log`,
        labels: { ...labels, 'io.kubernetes.container.name': cname },
        annotations: {
          'io.kubernetes.container.hash': (0x1f2e3d4c + i).toString(16),
          'io.kubernetes.container.restartCount': '0',
          'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
          'io.kubernetes.container.terminationMessagePolicy': 'File',
          'io.kubernetes.pod.terminationGracePeriod': '30',
        },
      },
    });
    const { containerId } = await unary<api.CreateContainerResponse>((md, o, cb) => rs.createContainer(req, md, o, cb));
    await unary<api.StartContainerResponse>((md, o, cb) =>
      rs.startContainer(api.StartContainerRequest.fromPartial({ containerId }), md, o, cb),
    );
  }
}

interface Dist {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}
function dist(xs: number[]): Dist {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  const r = (v: number) => Math.round(v * 100) / 100;
  return { p50: r(q(0.5)), p95: r(q(0.95)), p99: r(q(0.99)), mean: r(s.reduce((a, b) => a + b, 0) / s.length) };
}

async function timeCalls(n: number, call: () => Promise<unknown>): Promise<Dist> {
  for (let i = 0; i < 5; i++) await call();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    xs.push(performance.now() - t0);
  }
  return dist(xs);
}

interface Row {
  sandboxes: number;
  containers: number;
  populateSec: number;
  listContainersBytes: number;
  listPodSandboxBytes: number;
  listContainers: Dist;
  listContainersRaw: Dist;
  listPodSandbox: Dist;
  listPodSandboxRaw: Dist;
  /** One ts-proto encode of the full ListContainersResponse, ms (what an uncached server pays per call). */
  encodeListContainersMs: number;
  decodeListContainersMs: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ktsb-'));
  const { child, endpoint } = await startChild(dir);
  const rs = new svc.RuntimeServiceClient(endpoint, grpc.credentials.createInsecure(), clientOptions);
  const raw = new RawClient(endpoint, grpc.credentials.createInsecure(), clientOptions) as unknown as {
    listContainers(req: api.ListContainersRequest, md: grpc.Metadata, o: Partial<grpc.CallOptions>, cb: Cb<Buffer>): void;
    listPodSandbox(req: api.ListPodSandboxRequest, md: grpc.Metadata, o: Partial<grpc.CallOptions>, cb: Cb<Buffer>): void;
    close(): void;
  };
  const rows: Row[] = [];
  let populated = 0;
  try {
    for (const size of SIZES) {
      const t0 = performance.now();
      const from = populated;
      await pool(size - from, (i) => populatePod(rs, from + i, join(dir, 'logs')));
      populated = size;
      const populateSec = (performance.now() - t0) / 1000;

      const lcReq = api.ListContainersRequest.fromPartial({});
      const lpReq = api.ListPodSandboxRequest.fromPartial({});
      const listContainers = () => unary<api.ListContainersResponse>((md, o, cb) => rs.listContainers(lcReq, md, o, cb));
      const sample = await listContainers();
      if (sample.containers.length !== size * 2) throw new Error(`expected ${size * 2} containers, got ${sample.containers.length}`);
      const rawLc = await unary<Buffer>((md, o, cb) => raw.listContainers(lcReq, md, o, cb));
      const rawLp = await unary<Buffer>((md, o, cb) => raw.listPodSandbox(lpReq, md, o, cb));

      let t = performance.now();
      for (let i = 0; i < 5; i++) api.ListContainersResponse.encode(sample).finish();
      const encodeListContainersMs = (performance.now() - t) / 5;
      t = performance.now();
      for (let i = 0; i < 5; i++) api.ListContainersResponse.decode(rawLc);
      const decodeListContainersMs = (performance.now() - t) / 5;

      const row: Row = {
        sandboxes: size,
        containers: size * 2,
        populateSec: Math.round(populateSec * 10) / 10,
        listContainersBytes: rawLc.length,
        listPodSandboxBytes: rawLp.length,
        listContainers: await timeCalls(CALLS, listContainers),
        listContainersRaw: await timeCalls(CALLS, () => unary<Buffer>((md, o, cb) => raw.listContainers(lcReq, md, o, cb))),
        listPodSandbox: await timeCalls(CALLS, () => unary<api.ListPodSandboxResponse>((md, o, cb) => rs.listPodSandbox(lpReq, md, o, cb))),
        listPodSandboxRaw: await timeCalls(CALLS, () => unary<Buffer>((md, o, cb) => raw.listPodSandbox(lpReq, md, o, cb))),
        encodeListContainersMs: Math.round(encodeListContainersMs * 100) / 100,
        decodeListContainersMs: Math.round(decodeListContainersMs * 100) / 100,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    rs.close();
    raw.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }

  const env = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    calls: CALLS,
    concurrency: CONCURRENCY,
    date: new Date().toISOString(),
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'sim-scale.json'), JSON.stringify({ env, rows }, null, 2) + '\n');
  const f = (d: Dist) => `${d.p50} / ${d.p95} / ${d.p99}`;
  const md = [
    '# sim-scale: ListContainers / ListPodSandbox round trips against kubelet-ts-sim',
    '',
    `Sim in a child process, unix socket, ${CALLS} sequential calls per cell after 5 warm-up calls; times in ms as p50 / p95 / p99.`,
    `"decoded" uses the generated ts-proto client; "raw" skips client decoding (server + transport only).`,
    `Node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), ${env.date}.`,
    '',
    '| sandboxes | containers | ListContainers decoded | ListContainers raw | ListPodSandbox decoded | ListPodSandbox raw | LC bytes | LP bytes | ts-proto encode LC (ms) | ts-proto decode LC (ms) | populate (s) |',
    '|---:|---:|---|---|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.sandboxes} | ${r.containers} | ${f(r.listContainers)} | ${f(r.listContainersRaw)} | ${f(r.listPodSandbox)} | ${f(r.listPodSandboxRaw)} | ${r.listContainersBytes} | ${r.listPodSandboxBytes} | ${r.encodeListContainersMs} | ${r.decodeListContainersMs} | ${r.populateSec} |`,
    ),
    '',
    "The sim caches each item's encoding (invalidated on state change), so a list is a buffer concatenation;",
    'the "ts-proto encode" column is what encoding the whole response per call would add on the server.',
    '',
  ].join('\n');
  writeFileSync(join(here, 'results', 'sim-scale.md'), md);
  console.log(md);
}

await main();
