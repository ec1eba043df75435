/**
 * Disk pressure eviction on a kubelet-ts node (eviction/): the agent's root
 * and pod log directories on a 64 MiB ext4 image, loop-mounted (upstream's
 * stats ignore tmpfs), with nodefs.available<30% as the only threshold that
 * can be met. A BestEffort pod writes 40 MiB into an emptyDir: the node
 * reports DiskPressure, that pod is evicted (Failed/Evicted with upstream's
 * message and an Evicted event), its space comes back, and DiskPressure
 * clears after the (shortened) transition period. A Guaranteed pod runs
 * throughout. Then, with no pressure, a pod over its emptyDir sizeLimit is
 * evicted and one within it is not. The mount and the loop device go in
 * afterAll, whatever happened.
 */
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import {
  applyNodePod,
  condition,
  containerLogHas,
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlJson,
  startClusterAgent,
  waitPodFailed,
  type ClusterPod,
  type NodeObject,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const run = promisify(execFile);
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
const TRANSITION_S = 15;

describeCluster('disk pressure eviction on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-evd-${id}`;
  const ns = `kts-e2e-evd-${id}`;
  let agent: AgentProcess | undefined;
  let fs = '';
  let mounted = false;

  const pod = (name: string) => getOrUndefined<ClusterPod>('pod', '-n', ns, name);
  const node = () => getOrUndefined<NodeObject>('node', nodeName);
  const availablePercent = () => {
    const s = statfsSync(fs);
    return (s.bavail * 100) / s.blocks;
  };

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns);
    // Inside the agent's directory: its cleanup unmounts what is mounted below it, deepest first, this too.
    fs = join(agent.dir, 'fs');
    const image = join(agent.dir, 'nodefs.img');
    mkdirSync(fs);
    await run('truncate', ['-s', '64M', image]);
    await run('mkfs.ext4', ['-q', '-F', image]);
    await run('mount', ['-o', 'loop', image, fs]);
    mounted = true;
    agent.extraArgs.push(
      `--root-dir=${join(fs, 'root')}`,
      `--pod-logs-dir=${join(fs, 'pod-logs')}`,
      '--eviction-hard=nodefs.available<30%',
      `--eviction-pressure-transition-period=${TRANSITION_S}s`,
      '--node-status-update-frequency=2s',
    );
    await startClusterAgent(agent);
  }, 120_000);

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    try {
      await agent?.cleanup();
    } finally {
      // cleanup unmounts the loop mount (autoclear frees the device); this covers a cleanup that failed before it.
      if (mounted && existsSync(fs)) await run('umount', ['-l', fs]).catch(() => undefined);
      await deleteNodeObjects(nodeName);
    }
  }, 120_000);

  it('evicts the BestEffort pod filling an emptyDir, reports and clears DiskPressure; the Guaranteed pod stays', async () => {
    const a = agent!;
    await applyNodePod(ns, nodeName, 'guaranteed', {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          command: ['sh', '-c', 'sleep 3600'],
          resources: { limits: { cpu: '100m', memory: '32Mi' }, requests: { cpu: '100m', memory: '32Mi' } },
        },
      ],
    });
    await a.until('the Guaranteed pod running', async () => (await pod('guaranteed'))?.status?.phase === 'Running');
    expect(condition(await node(), 'DiskPressure')?.status).toBe('False');
    const before = availablePercent();
    expect(before).toBeGreaterThan(60);

    await applyNodePod(ns, nodeName, 'writer', {
      containers: [
        {
          name: 'writer',
          image: IMAGE,
          command: ['sh', '-c', 'echo filling /data; dd if=/dev/zero of=/data/fill bs=1M count=40; sync; echo done; sleep 3600'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    });
    const writer = await a.until('the writer running', async () => {
      const p = await pod('writer');
      return p?.status?.phase === 'Running' && p;
    });
    await pollUntil('the file system below 30% available', () => availablePercent() < 30, { timeoutMs: 30_000, intervalMs: 200 });
    const crossedAt = Date.now();

    await a.until('DiskPressure=True', async () => condition(await node(), 'DiskPressure')?.status === 'True', 30_000);
    const pressureAfter = (Date.now() - crossedAt) / 1000;
    const evicted = await waitPodFailed(a, ns, 'writer', 'the writer evicted');
    expect(evicted.status?.reason).toBe('Evicted');
    expect(evicted.status?.message).toMatch(
      /^The node was low on resource: ephemeral-storage\. Container writer was using \d+(Ki|Mi)?, which exceeds its request of 0\. $/,
    );
    const events = await kubectlJson<{ items: { reason: string; type: string; message: string; involvedObject: { name: string } }[] }>(
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'reason=Evicted',
    );
    expect(
      events.items.some((e) => e.involvedObject.name === 'writer' && e.type === 'Warning' && e.message === evicted.status?.message),
    ).toBe(true);

    // Its content goes: the emptyDir is torn down and the space is back.
    const volumeDir = join(fs, 'root/pods', writer.metadata.uid, 'volumes/kubernetes.io~empty-dir/data');
    await a.until("the evicted pod's emptyDir removed", () => !existsSync(volumeDir), 30_000);
    expect(availablePercent()).toBeGreaterThan(60);

    await a.until(
      'DiskPressure=False after the transition period',
      async () => condition(await node(), 'DiskPressure')?.status === 'False',
      60_000,
    );
    const clearedAfter = (Date.now() - crossedAt) / 1000;
    expect(clearedAfter).toBeGreaterThanOrEqual(TRANSITION_S);

    const g = await pod('guaranteed');
    expect(g?.status?.phase).toBe('Running');
    expect(g?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(a.logs.some((l) => l.includes('eviction manager') && l.includes('guaranteed') && l.includes('evicted'))).toBe(false);
    console.log(`DiskPressure seen ${pressureAfter.toFixed(1)} s after crossing; cleared ${clearedAfter.toFixed(1)} s after crossing`);
  }, 150_000);

  it('evicts a pod over its emptyDir sizeLimit; one within its limit, measured in the same pass, stays', async () => {
    const a = agent!;
    const writer = (name: string, mib: number) =>
      applyNodePod(ns, nodeName, name, {
        containers: [
          {
            name: 'app',
            image: IMAGE,
            command: ['sh', '-c', `dd if=/dev/zero of=/data/fill bs=1M count=${mib}; sync; echo written; sleep 3600`],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', emptyDir: { sizeLimit: '4Mi' } }],
      });
    const written = (name: string) => containerLogHas(join(fs, 'pod-logs'), ns, name, 'app', 'written');
    // The pod within its limit has written before the other starts: every pass that sees one sees both.
    await writer('within', 2);
    await a.until('the pod within its limit has written', () => written('within'));
    await writer('over', 8);
    const evicted = await waitPodFailed(a, ns, 'over', 'the pod over its sizeLimit evicted');
    expect(evicted.status).toMatchObject({ reason: 'Evicted', message: 'Usage of EmptyDir volume "data" exceeds the limit "4Mi". ' });
    expect(condition(await node(), 'DiskPressure')?.status).toBe('False');
    const within = await pod('within');
    expect(within?.status?.phase).toBe('Running');
    expect(within?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 90_000);
});
