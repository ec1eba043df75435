/**
 * The volume manager on a dense node (`npm run bench -- volumes`, root only:
 * it really mounts). N pods, each with a memory-backed emptyDir (a tmpfs, like
 * a secret or token volume), a downwardAPI volume (a tmpfs plus an atomic
 * write) and an emptyDir on disk, all set up at once as at a node boot, then
 * every pod resynced (the downwardAPI volumes are rewritten), then all torn
 * down. For each phase: wall time, per-pod wait latency and the main thread's
 * event-loop lag while it ran. Three configurations in one run, reported as
 * ratios to the agent's own (mount commands through the helper process, 8
 * operations at once): each command a child process of this process (fork of
 * a large process on the main thread), and the helper with 1 operation at a time.
 * Args: --pods N (default 200). Writes bench/results/volumes.{json,md}.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { Pod } from '../src/api/pod.js';
import { realClock } from '../src/common/clock.js';
import { MountHelper } from '../src/common/mount-helper.js';
import { execCommand, LinuxMounter, mountsUnder } from '../src/common/mounter.js';
import { VolumeManager } from '../src/main/volumes/volume-manager.js';
import { volumePlugins } from '../src/main/volumes/volume-setup.js';
import { LagProbe } from './lib/lag.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';

const PODS = Number(arg('pods', '200'));

function pod(i: number): Pod {
  return {
    metadata: { uid: `bench-uid-${i}`, name: `web-${i}`, namespace: 'bench', labels: { app: 'web', i: String(i) } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'x',
          volumeMounts: [
            { name: 'token', mountPath: '/t' },
            { name: 'info', mountPath: '/i' },
            { name: 'scratch', mountPath: '/s' },
          ],
        },
      ],
      volumes: [
        { name: 'token', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
        { name: 'info', downwardAPI: { defaultMode: 0o644, items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        { name: 'scratch', emptyDir: {} },
      ],
    },
  };
}

interface Phase {
  wallMs: number;
  podP50Ms: number;
  podP99Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

async function phase(run: (i: number) => Promise<unknown>): Promise<Phase> {
  const lag = new LagProbe();
  lag.start();
  const started = performance.now();
  const perPod = await Promise.all(
    Array.from({ length: PODS }, async (_, i) => {
      const t = performance.now();
      await run(i);
      return performance.now() - t;
    }),
  );
  const wallMs = performance.now() - started;
  lag.stop();
  return {
    wallMs: round(wallMs, 1),
    podP50Ms: round(percentile(perPod, 50), 1),
    podP99Ms: round(percentile(perPod, 99), 1),
    lagP99Ms: round(lag.percentileMs(99), 2),
    lagMaxMs: round(lag.histogram.max / 1e6, 2),
  };
}

// Ballast, so this process is as large as an agent holding a few hundred pods (forks cost with the size).
const ballast = Array.from({ length: 150 }, () => Buffer.alloc(1 << 20, 1));

async function measure(
  concurrency: number,
  via: 'helper' | 'exec',
): Promise<Record<'setUp' | 'resync' | 'tearDown', Phase> & { mounts: number }> {
  const root = await mkdtemp(join(tmpdir(), 'kts-bench-vol-'));
  const helper = new MountHelper();
  helper.start();
  const mounter = new LinuxMounter(via === 'helper' ? helper.run : execCommand);
  const logger = pino({ level: 'silent' });
  const vm = new VolumeManager({
    host: { rootDir: root, mounter, clock: realClock, logger, nodeAllocatable: { cpu: '2', memory: '4Gi' } },
    plugins: volumePlugins(),
    recorder: { record: () => undefined },
    clock: realClock,
    logger,
    maxConcurrentOperations: concurrency,
  });
  const pods = Array.from({ length: PODS }, (_, i) => pod(i));
  try {
    const setUp = await phase((i) => vm.waitForAttachAndMount(pods[i]));
    const mounts = mountsUnder(await mounter.list(), root).length;
    // A resync asks for a remount of the downwardAPI volumes and returns at once; measure until they are rewritten.
    const resync = await phase(async (i) => {
      await vm.waitForAttachAndMount(pods[i]);
      await vm.idle();
    });
    const tearDown = await phase((i) => vm.waitForUnmount(pods[i].metadata.uid!));
    return { setUp, resync, tearDown, mounts };
  } finally {
    for (const m of mountsUnder(await mounter.list(), root)) await mounter.unmount(m.mountPoint).catch(() => undefined);
    helper.close();
    await rm(root, { recursive: true, force: true });
  }
}

const agent = await measure(8, 'helper');
const exec = await measure(8, 'exec');
const serial = await measure(1, 'helper');
const ratio = (a: number, b: number) => (b === 0 ? 0 : round(a / b, 2));
const phases = ['setUp', 'resync', 'tearDown'] as const;
const configs = { 'helper, 8 at once (the agent)': agent, 'child process per command, 8 at once': exec, 'helper, 1 at a time': serial };
const json = {
  machine: machine(),
  pods: PODS,
  volumesPerPod: 3,
  tmpfsMountsPerPod: 2,
  rssMB: Math.round(process.memoryUsage().rss / 1e6),
  ballastMB: ballast.length,
  results: Object.fromEntries(
    Object.entries(configs).map(([name, r]) => [
      name,
      {
        mountsAfterSetUp: r.mounts,
        ...Object.fromEntries(
          phases.map((p) => [
            p,
            { ...r[p], wallRatioToAgent: ratio(r[p].wallMs, agent[p].wallMs), lagP99RatioToAgent: ratio(r[p].lagP99Ms, agent[p].lagP99Ms) },
          ]),
        ),
      },
    ]),
  ),
};
const rows = Object.entries(configs)
  .flatMap(([name, r]) =>
    phases.map(
      (p) =>
        `| ${name} | ${p} | ${r[p].wallMs} (${ratio(r[p].wallMs, agent[p].wallMs)}×) | ${r[p].podP50Ms} / ${r[p].podP99Ms} | ${r[p].lagP99Ms} (${ratio(r[p].lagP99Ms, agent[p].lagP99Ms)}×) / ${r[p].lagMaxMs} |`,
    ),
  )
  .join('\n');
const md = `# Volume manager: ${PODS} pods, 3 volumes each (2 tmpfs), real mounts

One run on ${String((json.machine as { cpus?: number }).cpus ?? '?')} cores, process RSS ${json.rssMB} MB (with ${json.ballastMB} MB of ballast standing in
for an agent's heap). Ratios are to the agent's configuration (first rows). Mounts after set-up: ${agent.mounts} (expected ${PODS * 2}).

| configuration | phase | wall ms (ratio) | per-pod wait p50 / p99 ms | event-loop lag p99 (ratio) / max ms |
|---|---|---|---|---|
${rows}
`;
writeResults('volumes', json, md);
console.log(md);
