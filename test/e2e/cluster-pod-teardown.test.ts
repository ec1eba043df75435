/**
 * Pod deletion and container errors as upstream's kubelet reports them (issue 32), against the real control
 * plane and containerd:
 * - a deleted pod whose volume teardown is held (a process outside the pod keeps its memory-backed emptyDir
 *   busy, so every unmount fails) stays in the apiserver with its terminal phase until the teardown completes,
 *   and only then disappears (today's upstream: deleted once SyncTerminatedPod has finished and the phase is
 *   terminal); an ordinary pod's deletion is not delayed;
 * - a subPath that escapes its volume through a symlink shows a generic message in the pod's status and events,
 *   the host paths only in the agent's log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import {
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlApply,
  kubectlJson,
  startClusterAgent,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface PodObject {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    containerStatuses?: { name: string; state?: { waiting?: { reason?: string; message?: string }; running?: object } }[];
  };
}

describeCluster('pod teardown and container errors as upstream reports them', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-td-${id}`;
  const ns = `kts-e2e-td-${id}`;
  let agent: AgentProcess;
  const holders: ChildProcess[] = [];

  const pod = (name: string) => getOrUndefined<PodObject>('pod', '-n', ns, name);
  /** The agent's log lines with klog's quoting undone (a message's inner quotes are escaped). */
  const log = () => agent.logs.map((l) => l.replaceAll('\\"', '"'));
  const createPod = (name: string, spec: object) =>
    kubectlApply(ns, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, terminationGracePeriodSeconds: 2, ...spec },
    });
  const runningPod = (name: string) =>
    agent.until(`pod ${name} running`, async () => {
      const p = await pod(name);
      return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) && p;
    });
  /** Deletes the pod and returns how long it took to disappear from the apiserver (ms). */
  const deleteAndTime = async (name: string, timeoutMs = 60_000) => {
    const t0 = Date.now();
    await kubectl('-n', ns, 'delete', 'pod', name, '--wait=false');
    await pollUntil(`pod ${name} to disappear`, async () => (await pod(name)) === undefined, { timeoutMs, intervalMs: 200 });
    return Date.now() - t0;
  };

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, []);
    await startClusterAgent(agent);
  });

  afterAll(async () => {
    for (const h of holders) h.kill('SIGKILL');
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('a deleted pod stays in the apiserver, terminal, while its volume teardown is held; it goes once the teardown completes', async () => {
    await createPod('held', {
      containers: [{ name: 'app', image: IMAGE, command: ['sleep', '3600'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      volumes: [{ name: 'scratch', emptyDir: { medium: 'Memory' } }],
    });
    const p = await runningPod('held');
    // A process outside the pod with its working directory on the pod's tmpfs: umount fails with EBUSY.
    const tmpfs = join(agent.dir, 'root/pods', p.metadata.uid, 'volumes/kubernetes.io~empty-dir/scratch');
    const holder = spawn('sleep', ['3600'], { cwd: tmpfs, stdio: 'ignore' });
    holders.push(holder);
    await kubectl('-n', ns, 'delete', 'pod', 'held', '--wait=false');

    const failures = () =>
      log().filter((l) => l.includes('UnmountVolume.TearDown failed for volume "scratch"') && l.includes(p.metadata.uid)).length;
    const held = await agent.until('two failed teardowns of the held volume', async () => {
      const current = await pod('held');
      if (!current) throw new Error('the pod was deleted from the apiserver while its volume was still mounted');
      return failures() >= 2 && current;
    });
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(['Succeeded', 'Failed']).toContain(held.status?.phase);

    const released = Date.now();
    holder.kill('SIGKILL');
    await pollUntil('the held pod to disappear once its teardown completes', async () => (await pod('held')) === undefined, {
      timeoutMs: 90_000,
      intervalMs: 200,
    });
    const at = (re: RegExp) => log().findIndex((l) => re.test(l) && l.includes(p.metadata.uid));
    const tornDown = at(/UnmountVolume\.TearDown succeeded for volume "scratch"/);
    const removed = at(/Pod fully terminated and removed from the apiserver/);
    expect(tornDown).toBeGreaterThanOrEqual(0);
    expect(removed).toBeGreaterThan(tornDown);
    console.log(`held pod: ${failures()} failed teardowns; gone ${((Date.now() - released) / 1000).toFixed(1)} s after the release`);
  });

  it('an ordinary pod is deleted without delay', async () => {
    await createPod('plain', { containers: [{ name: 'app', image: IMAGE, command: ['sleep', '3600'] }] });
    await runningPod('plain');
    const ms = await deleteAndTime('plain');
    console.log(`ordinary pod (grace 2 s): gone ${(ms / 1000).toFixed(1)} s after kubectl delete`);
    // Grace 2 s: a generous bound only (timings are the benchmarks' business); held pods are the case above.
    expect(ms).toBeLessThan(30_000);
  });

  it('a subPath escaping its volume: a generic message in the status and events, the host paths only in the log', async () => {
    await createPod('escape', {
      initContainers: [
        { name: 'link', image: IMAGE, command: ['ln', '-s', '/', '/vol/escape'], volumeMounts: [{ name: 'vol', mountPath: '/vol' }] },
      ],
      containers: [
        { name: 'app', image: IMAGE, command: ['sleep', '3600'], volumeMounts: [{ name: 'vol', mountPath: '/x', subPath: 'escape' }] },
      ],
      volumes: [{ name: 'vol', emptyDir: {} }],
    });
    const message = 'failed to prepare subPath for volumeMount "vol" of container "app"';
    const waiting = await agent.until('the subPath error in the pod status', async () => {
      const w = (await pod('escape'))?.status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' && w;
    });
    expect(waiting.message).toBe(message);
    const events = await kubectlJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=escape',
    );
    const failed = events.items.filter((e) => e.reason === 'Failed').map((e) => e.message);
    expect(failed).toContain(`Error: ${message}`);
    for (const m of failed) expect(m).not.toContain(agent.dir);
    const volumeDir = join(agent.dir, 'root/pods');
    const logged = await agent.until('the detail in the agent log', () =>
      log().find((l) => l.includes(message) && l.includes('not within volume path') && l.includes(volumeDir)),
    );
    expect(logged).toMatch(/^E\d{4} /);
  });
});
