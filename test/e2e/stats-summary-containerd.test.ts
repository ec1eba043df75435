/**
 * /stats/summary on real containerd (1.6 here): every pod is reported with CPU and memory. A pod writing into
 * an emptyDir and its writable layer gets its volume, rootfs, log and ephemeral-storage figures, checked
 * against du and against what the container itself sees; its network against the container's own
 * /proc/net/dev, the node's against the host's. With cgroupsPerQOS off (sandboxes without a cgroup parent)
 * containerd cannot give sandbox stats ("cgroupPath is empty"): CPU and memory are summed from the
 * containers, as upstream's CRI stats provider does when a pod cgroup's stats are missing (before that fix
 * the whole summary was an HTTP 500), and the pod network is read from the sandbox process's namespace.
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

interface Iface {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

type Network = Iface & { time: string; interfaces?: Iface[] };

interface Summary {
  node: { nodeName: string; fs?: FsStats; network?: Network };
  pods: {
    podRef: { name: string; namespace: string; uid: string };
    network?: Network;
    containers?: { name: string; memory?: { workingSetBytes?: number }; rootfs?: FsStats; logs?: FsStats }[];
    volume?: (FsStats & { name: string })[];
    'ephemeral-storage'?: FsStats;
    cpu?: { usageCoreNanoSeconds?: number };
    memory?: { workingSetBytes?: number };
  }[];
}

const MiB = 1024 * 1024;
const du = async (path: string) => Number((await run('du', ['-s', '-B1', path])).stdout.split('\t')[0]);
/** eth0's received bytes in a /proc/net/dev text (or one of its lines). */
const rxOf = (text: string) => Number(/eth0:\s*(\d+)/.exec(text)?.[1] ?? NaN);
/** Some traffic on eth0 (pings to the gateway, whether or not they are answered), then the container's own view of it. */
const NET_PROBE =
  'gw=$(ip route | awk \'/default/ {print $3}\'); ping -c 3 -s 1000 -W 1 "$gw" >/dev/null 2>&1; echo "own-net $(grep eth0: /proc/net/dev)"';

async function summaryOf(agent: AgentProcess): Promise<Summary> {
  const r = await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`);
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return (await r.json()) as Summary;
}

/** The text of the pod's container `app` logs so far, or undefined before its directory exists. */
function appLogs(agent: AgentProcess, ns: string, name: string, uid: string): string | undefined {
  const dir = join(agent.dir, 'pod-logs', `${ns}_${name}_${uid}`, 'app');
  if (!existsSync(dir)) return undefined;
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('');
}

/** The pod's network in the summary against the container's own /proc/net/dev, read earlier (so not above it). */
async function expectPodNetworkAsSeenInside(agent: AgentProcess, ns: string, name: string): Promise<void> {
  const pod = await agent.waitPod('Running', name, (p) => p.status?.phase === 'Running' && p);
  const uid = pod.metadata.uid!;
  const own = await agent.until('the container to report its own /proc/net/dev', () => {
    const line = /own-net (.*)/.exec(appLogs(agent, ns, pod.metadata.name!, uid) ?? '')?.[1];
    return line !== undefined && rxOf(line);
  });
  const p = await agent.until('the pod with its network', async () =>
    (await summaryOf(agent)).pods.find((x) => x.podRef.uid === uid && x.network),
  );
  const net = p.network!;
  expect(net.name).toBe('eth0');
  expect(net.interfaces?.map((i) => i.name)).toEqual(['eth0']);
  expect(net.rxBytes).toBeGreaterThanOrEqual(own);
  // Later traffic (neighbour discovery and the like) is a few hundred bytes a minute here.
  expect(net.rxBytes! - own).toBeLessThan(64 * 1024);
  expect(net.txBytes).toBeGreaterThan(0);
  expect(Math.abs(Date.parse(net.time) - Date.now())).toBeLessThan(120_000); // a real time, not containerd 1.6's zero
  console.log(`${name}: eth0 rxBytes ${net.rxBytes} in the summary, ${own} seen earlier inside the container`);
}

/** The overlay upper directory (the writable layer) of a running container, from this mount namespace's mountinfo. */
function upperDirOf(containerId: string): string {
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4]?.endsWith(`/${containerId}/rootfs`));
  const upper = line && /[, ]upperdir=([^,\s]+)/.exec(line)?.[1];
  if (!upper) throw new Error(`no overlay rootfs mount for container ${containerId}`);
  return upper;
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
        command: [
          'sh',
          '-c',
          'dd if=/dev/zero of=/data/fill bs=1M count=3; dd if=/dev/zero of=/root-fill bs=1M count=2; sync; ' +
            `echo "own-view $(du -sk /data)"; ${NET_PROBE}; sleep 3600`,
        ],
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
      const s = await summaryOf(agent);
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

  it("reports the node's network as the host's /proc/1/net/dev counts it", async () => {
    const before = readFileSync('/proc/1/net/dev', 'utf8');
    const node = (await summaryOf(agent)).node;
    const after = readFileSync('/proc/1/net/dev', 'utf8');
    const names = before
      .split('\n')
      .slice(2)
      .map((l) => l.split(':')[0].trim())
      .filter((n) => n !== '' && !/^(lo|veth|docker)/i.test(n));
    expect(node.network?.interfaces?.map((i) => i.name)).toEqual(names);
    if (names.includes('eth0')) {
      expect(node.network?.name).toBe('eth0');
      expect(node.network?.rxBytes).toBeGreaterThanOrEqual(rxOf(before));
      expect(node.network?.rxBytes).toBeLessThanOrEqual(rxOf(after));
    }
  });

  it('reports the emptyDir, rootfs, logs and ephemeral storage of a pod, as du and the container see them', async () => {
    const pod = await agent.waitPod('Running', 'disk', (p) => p.status?.phase === 'Running' && p);
    const uid = pod.metadata.uid!;
    const logDir = join(agent.dir, 'pod-logs', `${ns}_${pod.metadata.name}_${uid}`, 'app');
    const ownView = await agent.until('the container to report its own du', () => {
      const m = /own-view (\d+)\s/.exec(appLogs(agent, ns, pod.metadata.name!, uid) ?? '');
      return m ? Number(m[1]) * 1024 : undefined;
    });
    const volumeDir = join(agent.dir, 'root/pods', uid, 'volumes/kubernetes.io~empty-dir/data');
    // containerd refreshes its snapshot usage every 10 s: wait for the one that counts the 2 MiB written.
    const p = await agent.until('the disk pod with its volume, rootfs and ephemeral storage', async () => {
      const found = (await summaryOf(agent)).pods.find((x) => x.podRef.uid === uid);
      const rootfs = found?.containers?.[0]?.rootfs?.usedBytes ?? 0;
      return found?.volume?.length && found['ephemeral-storage'] && found.containers?.[0]?.logs && rootfs >= 2 * MiB ? found : undefined;
    });
    const volume = p.volume!.find((v) => v.name === 'data')!;
    expect(volume.usedBytes).toBe(await du(volumeDir));
    // The container's du counts the same files (in KiB, and without the directory's own block on some file systems).
    expect(Math.abs(volume.usedBytes! - ownView)).toBeLessThanOrEqual(8192);
    expect(volume.usedBytes).toBeGreaterThanOrEqual(3 * MiB);
    expect(volume.capacityBytes).toBeGreaterThan(0);
    // The writable layer: containerd's snapshot usage against du of the overlay upper directory.
    const cid = pod.status!.containerStatuses![0].containerID!.replace(/^containerd:\/\//, '');
    const rootfs = p.containers![0].rootfs!;
    const upperDu = await du(upperDirOf(cid));
    expect(Math.abs(rootfs.usedBytes! - upperDu)).toBeLessThanOrEqual(16 * 1024);
    console.log(`rootfs ${rootfs.usedBytes} (du of the upper dir ${upperDu}); emptyDir ${volume.usedBytes} (container ${ownView})`);
    const logs = p.containers![0].logs!;
    expect(logs.usedBytes).toBe(await du(logDir));
    const eph = p['ephemeral-storage']!;
    expect(eph.usedBytes).toBeGreaterThanOrEqual(volume.usedBytes! + logs.usedBytes! + rootfs.usedBytes!);
    expect(eph.capacityBytes).toBeGreaterThan(0);
  });

  it("reports the pod's network (containerd's sandbox stats) as the container sees it", async () => {
    await expectPodNetworkAsSeenInside(agent, ns, 'disk');
  });
});

describeE2E('/stats/summary on containerd, sandboxes without a cgroup parent', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `kts-e2e-stats-noqos-${id}`;
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `kts-e2e-stats-noqos-${id}`, ns, [
      '--cgroups-per-qos=false',
      '--enforce-node-allocatable=',
    ]);
    agent.writeManifest('net', podManifest('net', ns, [{ name: 'app', command: ['sh', '-c', `${NET_PROBE}; sleep 3600`] }]));
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
  });

  it('CPU and memory summed from the containers; the network read from the sandbox process, as the container sees it', async () => {
    const pod = await agent.waitPod('Running', 'net', (p) => p.status?.phase === 'Running' && p);
    const p = await agent.until('the pod with container stats', async () =>
      (await summaryOf(agent)).pods.find((x) => x.podRef.uid === pod.metadata.uid && x.containers?.[0]?.memory?.workingSetBytes),
    );
    expect(p.memory?.workingSetBytes).toBe(p.containers![0].memory!.workingSetBytes);
    expect(p.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    await expectPodNetworkAsSeenInside(agent, ns, 'net');
  });
});
