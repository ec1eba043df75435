/**
 * The volume manager on a dense node (`npm run bench -- volumes`, root only:
 * it really mounts). N pods, each with a memory-backed emptyDir (a tmpfs, like
 * a secret or token volume), a downwardAPI volume (a tmpfs plus an atomic
 * write) and an emptyDir on disk, all set up at once as at a node boot, then
 * every pod resynced (the downwardAPI volumes are rewritten), then all torn
 * down. For each phase: wall time, per-pod wait latency and the main thread's
 * event-loop lag while it ran. Two configurations in one run: the default of
 * 8 operations at once and 1 at a time (serial), reported as ratios.
 * Args: --pods N (default 200). Writes bench/results/volumes.{json,md}.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { Pod } from '../src/api/pod.js';
import { realClock } from '../src/common/clock.js';
import { LinuxMounter, mountsUnder } from '../src/common/mounter.js';
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
  } as Pod;
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

async function measure(concurrency: number): Promise<Record<'setUp' | 'resync' | 'tearDown', Phase> & { mounts: number }> {
  const root = await mkdtemp(join(tmpdir(), 'kts-bench-vol-'));
  const mounter = new LinuxMounter();
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
    const setUp = await phase((i) => vm.waitForAttachAndMount(pods[i]!));
    const mounts = mountsUnder(await mounter.list(), root).length;
    // A resync asks for a remount of the downwardAPI volumes and returns at once; measure until they are rewritten.
    const resync = await phase(async (i) => {
      await vm.waitForAttachAndMount(pods[i]!);
      await vm.idle();
    });
    const tearDown = await phase((i) => vm.waitForUnmount(pods[i]!.metadata.uid!));
    return { setUp, resync, tearDown, mounts };
  } finally {
    for (const m of mountsUnder(await mounter.list(), root)) await mounter.unmount(m.mountPoint).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

const serial = await measure(1);
const parallel = await measure(8);
const ratio = (a: number, b: number) => (b === 0 ? 0 : round(a / b, 2));
const phases = ['setUp', 'resync', 'tearDown'] as const;
const json = {
  machine: machine(),
  pods: PODS,
  volumesPerPod: 3,
  tmpfsMountsPerPod: 2,
  mountsAfterSetUp: { serial: serial.mounts, parallel: parallel.mounts },
  results: Object.fromEntries(
    phases.map((p) => [
      p,
      { serial: serial[p], parallel: parallel[p], wallRatioSerialOverParallel: ratio(serial[p].wallMs, parallel[p].wallMs) },
    ]),
  ),
};
const rows = phases
  .map(
    (p) =>
      `| ${p} | ${parallel[p].wallMs} | ${serial[p].wallMs} | ${ratio(serial[p].wallMs, parallel[p].wallMs)}× | ${parallel[p].podP50Ms} / ${parallel[p].podP99Ms} | ${serial[p].podP50Ms} / ${serial[p].podP99Ms} | ${parallel[p].lagP99Ms} / ${parallel[p].lagMaxMs} | ${serial[p].lagP99Ms} / ${serial[p].lagMaxMs} |`,
  )
  .join('\n');
const md = `# Volume manager: ${PODS} pods, 3 volumes each (2 tmpfs), real mounts

One run on ${String((json.machine as { cpus?: number }).cpus ?? '?')} cores. 8 = the default of 8 operations at once; 1 = one at a time.
Mounts after set-up: ${parallel.mounts} (expected ${PODS * 2}).

| phase | wall ms (8) | wall ms (1) | 1 / 8 | per-pod p50 / p99 ms (8) | per-pod p50 / p99 ms (1) | event-loop lag p99 / max ms (8) | lag p99 / max ms (1) |
|---|---|---|---|---|---|---|---|
${rows}
`;
writeResults('volumes', json, md);
console.log(md);
