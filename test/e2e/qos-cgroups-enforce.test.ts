/**
 * What the pod cgroups enforce on real containerd, with the default
 * settings (cgroupsPerQOS true; the harness gives the agent a cgroupRoot of
 * its own):
 *
 * - Pod-level OOM kill. In v1.20 a pod's memory limit is the sum of its
 *   containers' limits, or its largest init container's, so live containers
 *   alone stay under it; memory that outlives a container does not. An init
 *   container leaves 24 MiB in the pod's shared /dev/shm (tmpfs pages stay
 *   charged to the pod), then two containers, each far under its own 20 MiB
 *   limit (about 14 MiB), together take the pod past its 40 MiB: the kernel
 *   kills in the pod cgroup, and the agent reports OOMKilled.
 * - CPU under contention. A Guaranteed pod (1 CPU) and a BestEffort pod
 *   busy-loop (the BestEffort one with two loops, so that on 2 CPUs they
 *   contend); over 20 s the Guaranteed pod's cpuacct usage is at least 80 %
 *   of its 1-CPU quota (shares 1024 against the besteffort tier's 2; equal
 *   shares would give it about two thirds).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { readCgroupLayout } from '../../src/main/cgroups/cgroup-controllers.js';
import { AgentProcess } from './agent-harness.js';
import { CGROUP_FS, cgroupExists } from './cgroup-root.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
const Mi = 1024 ** 2;
/** busybox awk holding a 10 MB string (about 14 MiB of the container's memory), then sleeping. */
const HOLD_10MB = ['awk', 'BEGIN { s = sprintf("%10000000s", ""); system("sleep 3600") }'];
const BUSY = 'while :; do :; done';
const WINDOW_S = 20;

function pod(name: string, namespace: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { terminationGracePeriodSeconds: 1, ...spec } };
}

describeE2E('what pod cgroups enforce on containerd (cgroupsPerQOS default)', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-qose-${run}`;
  let agent: AgentProcess;
  let v2 = false;
  const cgFile = (controller: string, rel: string, file: string) =>
    readFileSync(join(CGROUP_FS, v2 ? '' : controller, rel, file), 'utf8').trim();
  const uidOf = (name: string) => agent.waitPod('in /pods', name, (p) => p.metadata.uid);

  beforeAll(async () => {
    v2 = (await readCgroupLayout(CGROUP_FS)).version === 2;
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-qose-${run}`, ns);
    await agent.start();
  }, 60_000);

  afterAll(async () => {
    const root = agent?.ownCgroupRoot;
    await agent?.cleanup();
    if (root) expect(cgroupExists(root)).toBe(false);
  }, 60_000);

  it('two containers that together pass the pod memory limit are OOM-killed at the pod level', async () => {
    const limits = (mem: string) => ({ requests: { memory: '8Mi' }, limits: { memory: mem } });
    agent.writeManifest(
      'oom',
      pod('oom', ns, {
        restartPolicy: 'Never',
        initContainers: [
          {
            name: 'fill',
            image: IMAGE,
            command: ['dd', 'if=/dev/zero', 'of=/dev/shm/fill', 'bs=1M', 'count=24'],
            resources: limits('40Mi'),
          },
        ],
        containers: ['a', 'b'].map((name) => ({ name, image: IMAGE, command: HOLD_10MB, resources: limits('20Mi') })),
      }),
    );
    const uid = await uidOf('oom');
    const podCg = `${agent.ownCgroupRoot}/kubepods/burstable/pod${uid}`;
    const killed = await agent.waitPod('a container OOM-killed', 'oom', (p: Pod) =>
      p.status?.containerStatuses?.find((c) => c.state?.terminated?.reason === 'OOMKilled'),
    );
    expect(killed.state?.terminated?.exitCode).toBe(137);
    // The pod's limit: max(20 + 20, 40) MiB, the init container's counting as upstream's PodRequestsAndLimits.
    if (v2) {
      expect(cgFile('memory', podCg, 'memory.max')).toBe(String(40 * Mi));
      expect(Number(/^oom_kill (\d+)$/m.exec(cgFile('memory', podCg, 'memory.events.local'))?.[1] ?? 0)).toBeGreaterThan(0);
    } else {
      expect(cgFile('memory', podCg, 'memory.limit_in_bytes')).toBe(String(40 * Mi));
      // The pod cgroup's own limit was hit (failcnt counts charges refused at this cgroup's limit), not a
      // container's: each holds about 14 MiB against its 20 MiB.
      expect(Number(cgFile('memory', podCg, 'memory.failcnt'))).toBeGreaterThan(0);
      expect(Number(cgFile('memory', podCg, 'memory.max_usage_in_bytes'))).toBeGreaterThanOrEqual(40 * Mi);
    }
    agent.deleteManifest('oom');
    await agent.until('the OOM pod cgroup to go', () => !cgroupExists(podCg));
  }, 60_000);

  it(`under CPU contention the Guaranteed pod gets at least 80 % of its 1 CPU over ${WINDOW_S} s`, async () => {
    // The cgroupRoot stands in for a node's root here: on this shared machine each busy task in the root cgroup
    // weighs 1024 against it, so it weighs as ten of them, and load outside the test does not decide the outcome.
    // Inside, only the QoS tiers compete: kubepods/pod<g> (1024 shares) against kubepods/besteffort (2).
    if (!v2) writeFileSync(join(CGROUP_FS, 'cpu', agent.ownCgroupRoot!, 'cpu.shares'), '10240');
    const res = { requests: { cpu: '1', memory: '32Mi' }, limits: { cpu: '1', memory: '32Mi' } };
    agent.writeManifest('g', pod('g', ns, { containers: [{ name: 'busy', image: IMAGE, command: ['sh', '-c', BUSY], resources: res }] }));
    agent.writeManifest('e', pod('e', ns, { containers: [{ name: 'busy', image: IMAGE, command: ['sh', '-c', `(${BUSY}) & ${BUSY}`] }] }));
    const [g, e] = await Promise.all(
      ['g', 'e'].map((n) => agent.waitPod('running', n, (p) => p.status?.phase === 'Running' && p.metadata.uid)),
    );
    const gCg = `${agent.ownCgroupRoot}/kubepods/pod${g}`;
    const eCg = `${agent.ownCgroupRoot}/kubepods/besteffort/pod${e}`;
    /** CPU seconds used by the cgroup so far. */
    const usage = (rel: string) =>
      v2
        ? Number(/^usage_usec (\d+)$/m.exec(cgFile('cpu', rel, 'cpu.stat'))![1]) / 1e6
        : Number(cgFile('cpuacct', rel, 'cpuacct.usage')) / 1e9;
    expect(v2 ? cgFile('cpu', gCg, 'cpu.max') : cgFile('cpu', gCg, 'cpu.cfs_quota_us')).toBe(v2 ? '100000 100000' : '100000');
    const before = [usage(gCg), usage(eCg)];
    await agent.until('both pods to use CPU', () => usage(gCg) > before[0] + 0.2 && usage(eCg) > before[1]);
    const [g0, e0, t0] = [usage(gCg), usage(eCg), performance.now()];
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000)); // the measurement window itself
    const [g1, e1, t1] = [usage(gCg), usage(eCg), performance.now()];
    const seconds = (t1 - t0) / 1000;
    const gShare = (g1 - g0) / seconds;
    console.log(
      `cpu contention over ${seconds.toFixed(1)} s: Guaranteed ${(g1 - g0).toFixed(2)} s (${(gShare * 100).toFixed(0)} % of 1 CPU), ` +
        `BestEffort ${(e1 - e0).toFixed(2)} s`,
    );
    expect(gShare).toBeGreaterThanOrEqual(0.8);
    for (const n of ['g', 'e']) agent.deleteManifest(n);
    await agent.until('both pod cgroups to go', () => !cgroupExists(gCg) && !cgroupExists(eCg));
  }, 60_000);
});
