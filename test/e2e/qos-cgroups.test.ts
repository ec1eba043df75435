/**
 * cgroupsPerQOS on real containerd (cgroupfs driver), with the default
 * settings (cgroupsPerQOS true, enforceNodeAllocatable [pods]) and the
 * cgroupRoot of its own the harness gives each agent: a Guaranteed, a Burstable and a BestEffort pod
 * under <root>/kubepods/pod<uid>, .../burstable/pod<uid> and
 * .../besteffort/pod<uid> with upstream's cpu shares, CFS quota, memory
 * limit and pids limit, and kubepods is capped at capacity minus the
 * reservations (enforceNodeAllocatable "pods"); deleted pods lose their cgroups; a pod cgroup left
 * by a SIGKILLed agent whose pod is gone is removed after the restart.
 * The harness removes the root cgroup in every hierarchy at the end.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_POD_UID } from '../../src/runtime/types.js';
import { readCgroupLayout } from '../../src/main/cgroups/cgroup-controllers.js';
import { AgentProcess } from './agent-harness.js';
import { CGROUP_FS, cgroupExists as cgExists } from './cgroup-root.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const PIDS_LIMIT = 200;
const Mi = 1024 ** 2;

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
function manifest(name: string, namespace: string, resources: Res): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sh', '-c', 'sleep 3600'], resources }],
    },
  };
}

/** The cgroup path of `pid` per controller (v1 "N:ctrl,ctrl:/path" lines; v2 "0::/path" under ''). */
function procCgroups(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').filter(Boolean)) {
    const [, ctrls, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    for (const c of (ctrls ?? '').split(',')) out.set(c, path ?? '');
  }
  return out;
}

describeE2E('QoS and pod cgroups on containerd (cgroupsPerQOS)', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-qos-${run}`;
  let cgRoot: string;
  let agent: AgentProcess;
  let cri: CriClient;
  let v2 = false;
  /** A cgroup file of `rel` (a cgroupfs path) for `controller`. */
  const cgFile = (controller: string, rel: string, file: string) =>
    readFileSync(join(CGROUP_FS, v2 ? '' : controller, rel, file), 'utf8').trim();

  const uidOf = (name: string) => agent.waitPod('running', name, (p) => p.status?.phase === 'Running' && p.metadata.uid);
  async function containerPid(uid: string): Promise<number> {
    return agent.until(`a running container of pod ${uid}`, async () => {
      const cs = (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_UID]: uid } } })).containers;
      for (const c of cs) {
        const st = await cri.containerStatus({ containerId: c.id, verbose: true });
        const info = JSON.parse(st.info['info'] ?? '{}') as { pid?: number };
        if (info.pid) return info.pid;
      }
      return undefined;
    });
  }

  beforeAll(async () => {
    v2 = (await readCgroupLayout(CGROUP_FS)).version === 2;
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
    // cgroupsPerQOS and enforceNodeAllocatable at their defaults; the harness makes and removes the cgroupRoot.
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-qos-${run}`, ns, [
      `--pod-max-pids=${PIDS_LIMIT}`,
      '--system-reserved=memory=100Mi',
      '--kube-reserved=cpu=100m',
    ]);
    cgRoot = agent.ownCgroupRoot!;
    agent.writeManifest('g', manifest('g', ns, { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } }));
    agent.writeManifest('b', manifest('b', ns, { requests: { cpu: '100m', memory: '16Mi' }, limits: { cpu: '300m', memory: '128Mi' } }));
    agent.writeManifest('e', manifest('e', ns, {}));
    await agent.start();
  }, 120_000);

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
    if (cgRoot) expect(cgExists(cgRoot)).toBe(false);
  }, 120_000);

  it('each pod runs in its QoS tier with upstream limits', async () => {
    const cases = [
      { name: 'g', tier: 'kubepods', shares: 204, quota: 20_000, memory: 64 * Mi },
      { name: 'b', tier: 'kubepods/burstable', shares: 102, quota: 30_000, memory: 128 * Mi },
      { name: 'e', tier: 'kubepods/besteffort', shares: 2, quota: -1, memory: undefined },
    ];
    for (const c of cases) {
      const uid = await uidOf(c.name);
      const podCg = `${cgRoot}/${c.tier}/pod${uid}`;
      const pid = await containerPid(uid);
      const paths = procCgroups(pid);
      for (const ctrl of v2 ? [''] : ['cpu', 'memory', 'pids'])
        expect(paths.get(ctrl), `${c.name} ${ctrl}`).toMatch(new RegExp(`^${podCg}/`));
      if (v2) {
        expect(cgFile('', podCg, 'cpu.max')).toBe(c.quota > 0 ? `${c.quota} 100000` : 'max 100000');
        expect(cgFile('', podCg, 'memory.max')).toBe(c.memory ? String(c.memory) : 'max');
      } else {
        expect(cgFile('cpu', podCg, 'cpu.shares'), `${c.name} shares`).toBe(String(c.shares));
        expect(cgFile('cpu', podCg, 'cpu.cfs_quota_us'), `${c.name} quota`).toBe(String(c.quota));
        if (c.quota > 0) expect(cgFile('cpu', podCg, 'cpu.cfs_period_us')).toBe('100000');
        // Unlimited memory reads as the kernel's page-rounded maximum.
        if (c.memory) expect(cgFile('memory', podCg, 'memory.limit_in_bytes'), `${c.name} memory`).toBe(String(c.memory));
        else expect(BigInt(cgFile('memory', podCg, 'memory.limit_in_bytes'))).toBeGreaterThan(BigInt(2 ** 60));
      }
      expect(cgFile('pids', podCg, 'pids.max'), `${c.name} pids`).toBe(String(PIDS_LIMIT));
    }
    if (!v2) {
      // enforceNodeAllocatable "pods" (the default): kubepods gets capacity minus the reservations.
      const cores = availableParallelism();
      expect(cgFile('cpu', `${cgRoot}/kubepods`, 'cpu.shares')).toBe(String(Math.trunc(((cores * 1000 - 100) * 1024) / 1000)));
      const memTotal = BigInt(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024n;
      const page = 4096n; // the kernel rounds a memory limit down to whole pages
      expect(cgFile('memory', `${cgRoot}/kubepods`, 'memory.limit_in_bytes')).toBe(String(((memTotal - 100n * BigInt(Mi)) / page) * page));
      // The pid capacity is pid_max (upstream's internal capacity); nothing of it is reserved here.
      expect(cgFile('pids', `${cgRoot}/kubepods`, 'pids.max')).toBe(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
      expect(cgFile('cpu', `${cgRoot}/kubepods/besteffort`, 'cpu.shares')).toBe('2');
      expect(cgFile('cpu', `${cgRoot}/kubepods/burstable`, 'cpu.shares')).toBe('102');
    }
  }, 120_000);

  it("/stats/summary reads each pod's memory from its pod cgroup (containers and sandbox together)", async () => {
    type Summary = {
      pods?: {
        podRef: { name: string };
        memory?: { workingSetBytes?: number };
        containers?: { memory?: { workingSetBytes?: number } }[];
      }[];
    };
    const pod = await agent.until('the Guaranteed pod in /stats/summary with pod and container memory', async () => {
      const s = (await (await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`)).json()) as Summary;
      const p = s.pods?.find((x) => x.podRef.name === `g-${agent.nodeName}`);
      return p?.memory?.workingSetBytes && p.containers?.[0]?.memory?.workingSetBytes ? p : undefined;
    });
    // Summed from the containers (upstream's fallback without pod cgroup stats) it would equal the app's alone;
    // the pod cgroup also holds the sandbox's pause process.
    expect(pod.memory!.workingSetBytes!).toBeGreaterThan(pod.containers![0].memory!.workingSetBytes!);
  });

  it('deleted pods lose their cgroups; the burstable tier drops back to 2 shares', async () => {
    const uids = await Promise.all(['g', 'b', 'e'].map((n) => uidOf(n)));
    const tiers = ['kubepods', 'kubepods/burstable', 'kubepods/besteffort'];
    for (const n of ['g', 'b', 'e']) agent.deleteManifest(n);
    await agent.until('the three pod cgroups to be removed', () => uids.every((uid, i) => !cgExists(`${cgRoot}/${tiers[i]}/pod${uid}`)));
    expect(await agent.pods()).toEqual([]);
    if (!v2) await agent.until('burstable shares back to 2', () => cgFile('cpu', `${cgRoot}/kubepods/burstable`, 'cpu.shares') === '2');
  }, 120_000);

  it('a pod cgroup left by a SIGKILLed agent, whose pod is gone, is removed after the restart; a desired pod keeps its own', async () => {
    agent.writeManifest('o', manifest('o', ns, {}));
    agent.writeManifest('k', manifest('k', ns, { requests: { cpu: '50m' } }));
    const uid = await uidOf('o');
    const kept = await uidOf('k');
    const podCg = `${cgRoot}/kubepods/besteffort/pod${uid}`;
    const keptCg = `${cgRoot}/kubepods/burstable/pod${kept}`;
    await containerPid(uid);
    const keptPid = await containerPid(kept);
    expect(cgExists(podCg)).toBe(true);
    await agent.stop('SIGKILL');
    agent.deleteManifest('o');
    await agent.start();
    await agent.until('the orphaned pod cgroup to be removed', () => !cgExists(podCg));
    // Its containers are stopped too (killed as an orphan, or with its cgroup).
    await agent.until('no running container of the orphan', async () => {
      const cs = (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_UID]: uid } } })).containers;
      return cs.every((c) => c.state !== ContainerState.CONTAINER_RUNNING);
    });
    // The pod still desired was adopted: same process, same cgroup.
    expect(cgExists(keptCg)).toBe(true);
    expect(await containerPid(kept)).toBe(keptPid);
    expect(procCgroups(keptPid).get(v2 ? '' : 'cpu')).toMatch(new RegExp(`^${keptCg}/`));
    agent.deleteManifest('k');
    await agent.until('the kept pod cgroup to go with its pod', () => !cgExists(keptCg));
  }, 120_000);
});
