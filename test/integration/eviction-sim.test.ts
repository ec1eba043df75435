/**
 * The eviction manager over real CRI stats from the simulated runtime
 * (eviction/cri-eviction-stats.ts through the criStats and diskUsage tasks,
 * inline runner): the sim reports the working sets the test sets
 * (SimControl.setContainerUsage), the node's memory comes from a stand-in
 * host probe whose figures the test sets, and emptyDir usage is walked on disk.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriClient } from '../../src/cri/client.js';
import { CriEvictionStats } from '../../src/main/eviction/cri-eviction-stats.js';
import { EvictionManager } from '../../src/main/eviction/eviction-manager.js';
import { parseThresholds } from '../../src/main/eviction/thresholds.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { createSharedState } from '../../src/shared/shared-state.js';
import { createTaskRunner, type TaskRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeHostProbe } from '../fakes/fake-host-probe.js';

const MI = 1024 * 1024;
const GI = 1024 * MI;
const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';

describe('eviction over the simulated runtime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-evict-sim-'));
  const rootDir = join(dir, 'root');
  let sim: SimRuntimeHandle;
  let cri: CriClient;
  let runner: TaskRunner;
  const containers = new Map<string, string>();

  const pod = (name: string, extra: Partial<Pod['spec']> = {}): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: BUSYBOX }], ...extra },
  });

  beforeAll(async () => {
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    runner = createTaskRunner(createSharedState({ maxPods: 8 }).workerInit(sim.endpoint), 0, 8);
    for (const name of ['hog', 'writer', 'guaranteed']) {
      const { podSandboxId } = await cri.runPodSandbox({
        config: { metadata: { name, namespace: 'ns', uid: `uid-${name}`, attempt: 0 }, logDirectory: join(dir, 'logs', name) },
      });
      const { containerId } = await cri.createContainer({
        podSandboxId,
        config: { metadata: { name: 'app', attempt: 0 }, image: { image: BUSYBOX }, command: ['sleep', '3600'], logPath: 'app/0.log' },
      });
      await cri.startContainer({ containerId });
      containers.set(name, containerId);
    }
  });

  afterAll(async () => {
    await runner?.close();
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ranks by the working sets the sim reports and the emptyDir usage on disk', async () => {
    const host = new FakeHostProbe({ memoryBytes: 4n * BigInt(GI) });
    host.fs = { capacityBytes: 100n * BigInt(GI), availableBytes: 60n * BigInt(GI), inodes: 1000n, inodesFree: 900n };
    host.workingSetBytes = 2n * BigInt(GI);
    const pods = [
      pod('guaranteed', {
        containers: [
          {
            name: 'app',
            image: BUSYBOX,
            resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          },
        ],
      }),
      pod('writer', { volumes: [{ name: 'scratch', emptyDir: {} }] }),
      pod('hog'),
    ];
    sim.control.setContainerUsage(containers.get('hog')!, { workingSetBytes: 400 * MI });
    sim.control.setContainerUsage(containers.get('writer')!, { workingSetBytes: 50 * MI });
    sim.control.setContainerUsage(containers.get('guaranteed')!, { workingSetBytes: 500 * MI });
    // 3 MiB in the writer's emptyDir.
    const scratch = join(rootDir, 'pods/uid-writer/volumes/kubernetes.io~empty-dir/scratch');
    mkdirSync(scratch, { recursive: true });
    writeFileSync(join(scratch, 'fill'), Buffer.alloc(3 * MI, 1));

    const killed: { pod: string; message: string }[] = [];
    const stats = new CriEvictionStats({
      runner,
      cri,
      host,
      rootDir,
      podLogsDir: join(dir, 'logs'),
      allocatableMemory: () => '3Gi',
      clock: new FakeClock(),
    });
    const [summary, usage] = await Promise.all([stats.node(), stats.pods(pods)]);
    const byUid = new Map(usage.pods.map((p) => [p.uid, p]));
    expect(byUid.get('uid-hog')?.containers[0].memoryWorkingSetBytes).toBe(400n * BigInt(MI));
    expect(byUid.get('uid-writer')?.volumes).toEqual([{ name: 'scratch', usedBytes: expect.any(BigInt) as unknown, inodesUsed: 2n }]);
    expect(byUid.get('uid-writer')!.volumes[0].usedBytes).toBeGreaterThanOrEqual(3n * BigInt(MI));
    expect(summary.observations['memory.available']).toMatchObject({ available: 2n * BigInt(GI), capacity: 4n * BigInt(GI) });
    // allocatableMemory.available comes with the pods' read: 3Gi − their working sets (the containers' 950Mi
    // and the sandboxes' own, under 1Mi in the sim).
    expect(summary.observations['allocatableMemory.available']).toBeUndefined();
    const allocatable = usage.observations['allocatableMemory.available']!.available;
    expect(allocatable).toBeLessThanOrEqual(3n * BigInt(GI) - 950n * BigInt(MI));
    expect(allocatable).toBeGreaterThan(3n * BigInt(GI) - 951n * BigInt(MI));

    const manager = (thresholds: Record<string, string>) =>
      new EvictionManager({
        thresholds: parseThresholds({
          evictionHard: thresholds,
          evictionSoft: {},
          evictionSoftGracePeriod: {},
          evictionMinimumReclaim: {},
          evictionMaxPodGracePeriod: 0,
        }),
        stats,
        activePods: () => pods.filter((p) => !killed.some((k) => k.pod === p.metadata.name)),
        killPod: (p, _grace, message) => killed.push({ pod: p.metadata.name!, message }),
        podCleanedUp: () => true,
        reclaimer: { deleteAllUnusedContainers: () => Promise.resolve(), deleteUnusedImages: () => Promise.resolve() },
        recorder: { record: () => undefined },
        nodeName: 'sim',
        pressureTransitionPeriodMs: 60_000,
        maxPodGracePeriodSeconds: 0,
        clock: new FakeClock(),
        logger: pino({ level: 'silent' }),
      });

    // Memory: the hog (400Mi over a request of 0) goes first; the Guaranteed pod is below its request.
    const m = manager({ 'memory.available': '1Gi' });
    host.workingSetBytes = 3n * BigInt(GI) + 512n * BigInt(MI);
    expect((await m.synchronize()).map((p) => p.metadata.name)).toEqual(['hog']);
    expect(killed[0].message).toBe('The node was low on resource: memory. Container app was using 400Mi, which exceeds its request of 0. ');
    expect(m.admit(pod('late'))).toEqual({ admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });

    // allocatableMemory.available: 3Gi − the pods' working sets (950Mi) = 2122Mi, under a 2500Mi threshold.
    killed.length = 0;
    host.workingSetBytes = 1n * BigInt(GI);
    const alloc = manager({ 'allocatableMemory.available': '2500Mi' });
    expect((await alloc.synchronize()).map((p) => p.metadata.name)).toEqual(['hog']);

    // Disk: the writer's emptyDir makes it the largest user over its (zero) request.
    killed.length = 0;
    const d = manager({ 'nodefs.available': '70%' });
    expect((await d.synchronize()).map((p) => p.metadata.name)).toEqual(['writer']);
  });
});
