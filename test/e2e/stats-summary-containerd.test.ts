/**
 * /stats/summary on real containerd (1.6 here): every pod is reported, those whose sandbox containerd cannot
 * give stats for ("cgroupPath is empty": the sandboxes kubelet-ts creates have no cgroup parent) with CPU and
 * memory summed from their containers, as upstream's CRI stats provider does when a pod cgroup's stats are
 * missing. Before the fix the whole summary was an HTTP 500. A pod writing into an emptyDir gets its
 * volume, log and ephemeral-storage figures, checked against du and against what the container itself sees.
 */
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const run = promisify(execFile);

interface FsStats {
  usedBytes?: number;
  inodesUsed?: number;
  capacityBytes?: number;
  availableBytes?: number;
}

interface Summary {
  node: { nodeName: string; fs?: FsStats };
  pods: {
    podRef: { name: string; namespace: string; uid: string };
    containers?: { name: string; memory?: { workingSetBytes?: number }; rootfs?: FsStats; logs?: FsStats }[];
    volume?: (FsStats & { name: string })[];
    'ephemeral-storage'?: FsStats;
    cpu?: { usageCoreNanoSeconds?: number };
    memory?: { workingSetBytes?: number };
  }[];
}

describeE2E('/stats/summary on containerd', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `kts-e2e-stats-${id}`;
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `kts-e2e-stats-${id}`, ns);
    for (const name of ['one', 'two']) agent.writeManifest(name, podManifest(name, ns, [{ name: 'app', command: ['sleep', '3600'] }]));
    const disk = podManifest('disk', ns, [
      {
        name: 'app',
        command: ['sh', '-c', 'dd if=/dev/zero of=/data/fill bs=1M count=3; sync; echo "own-view $(du -sk /data)"; sleep 3600'],
      },
    ]) as { spec: { containers: Record<string, unknown>[]; volumes?: unknown[] } };
    disk.spec.containers[0].volumeMounts = [{ name: 'data', mountPath: '/data' }];
    disk.spec.volumes = [{ name: 'data', emptyDir: {} }];
    agent.writeManifest('disk', disk);
    await agent.start();
    for (const name of ['one', 'two']) await agent.waitPod('Running', name, (p) => p.status?.phase === 'Running');
  });

  afterAll(async () => {
    await agent?.cleanup();
  });

  it('answers 200 with every pod, their containers, and pod CPU and memory', async () => {
    const summary = await agent.until('a summary with both pods and their container stats', async () => {
      const r = await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`);
      if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
      const s = (await r.json()) as Summary;
      const mine = s.pods.filter((p) => p.podRef.namespace === ns);
      return mine.length === 3 && mine.every((p) => p.containers?.[0]?.memory?.workingSetBytes !== undefined) && s;
    });
    const mine = summary.pods
      .filter((p) => p.podRef.namespace === ns && !p.podRef.name.startsWith('disk-'))
      .sort((a, b) => a.podRef.name.localeCompare(b.podRef.name));
    expect(mine.map((p) => p.podRef.name)).toEqual([`one-${agent.nodeName}`, `two-${agent.nodeName}`]);
    for (const p of mine) {
      expect(p.containers?.map((c) => c.name)).toEqual(['app']);
      expect(p.memory?.workingSetBytes).toBeGreaterThan(0);
      expect(p.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    }
  });

  it('reports the emptyDir, logs and ephemeral storage of a pod, as du and the container see them', async () => {
    const pod = await agent.waitPod('Running', 'disk', (p) => p.status?.phase === 'Running' && p);
    const uid = pod.metadata.uid!;
    const logDir = join(agent.dir, 'pod-logs', `${ns}_${pod.metadata.name}_${uid}`, 'app');
    const ownView = await agent.until('the container to report its own du', () => {
      if (!existsSync(logDir)) return undefined;
      const text = readdirSync(logDir)
        .map((f) => readFileSync(join(logDir, f), 'utf8'))
        .join('');
      const m = /own-view (\d+)\s/.exec(text);
      return m ? Number(m[1]) * 1024 : undefined;
    });
    const volumeDir = join(agent.dir, 'root/pods', uid, 'volumes/kubernetes.io~empty-dir/data');
    const du = async (path: string) => Number((await run('du', ['-s', '-B1', path])).stdout.split('\t')[0]);
    const p = await agent.until('the disk pod with its volume and ephemeral storage', async () => {
      const r = await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`);
      const s = (await r.json()) as Summary;
      const found = s.pods.find((x) => x.podRef.uid === uid);
      return found?.volume?.length && found['ephemeral-storage'] && found.containers?.[0]?.logs ? found : undefined;
    });
    const volume = p.volume!.find((v) => v.name === 'data')!;
    expect(volume.usedBytes).toBe(await du(volumeDir));
    // The container's du counts the same files (in KiB, and without the directory's own block on some file systems).
    expect(Math.abs(volume.usedBytes! - ownView)).toBeLessThanOrEqual(8192);
    expect(volume.usedBytes).toBeGreaterThanOrEqual(3 * 1024 * 1024);
    expect(volume.capacityBytes).toBeGreaterThan(0);
    const logs = p.containers![0].logs!;
    expect(logs.usedBytes).toBe(await du(logDir));
    const eph = p['ephemeral-storage']!;
    expect(eph.usedBytes).toBeGreaterThanOrEqual(volume.usedBytes! + logs.usedBytes! + (p.containers![0].rootfs?.usedBytes ?? 0));
    expect(eph.capacityBytes).toBeGreaterThan(0);
    // Pod network and process counts come from the sandbox's stats, which containerd 1.6 cannot give for
    // sandboxes without a cgroup parent (cgroupsPerQOS false): not checked here.
  });
});
