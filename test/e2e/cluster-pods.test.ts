/**
 * Pods from the apiserver on a kubelet-ts node (issue 10), with the real
 * scheduler, controller-manager and kubectl as the observer: a Deployment rolls
 * out, Jobs complete and fail, graceful deletion (also while the agent is
 * down), CrashLoopBackOff, mirror pods of static pods, and an apiserver restart
 * that loses nothing.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_UID } from '../../src/runtime/types.js';
import { startLocalRegistry } from '../helpers/local-registry.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import {
  ADMIN_KUBECONFIG,
  condition,
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlJson,
  nodeKubeconfig,
  CP_DIR,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const run = promisify(execFile);
const CP_SCRIPT = join(resolve(fileURLToPath(import.meta.url), '../../..'), 'scripts/control-plane.sh');
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface PodObject {
  metadata: {
    name: string;
    uid: string;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: { kind: string }[];
  };
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      restartCount: number;
      containerID?: string;
      state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: { exitCode: number; reason?: string } };
    }[];
  };
}

describeCluster('pods from the apiserver on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-pods-${id}`;
  const ns = `kts-e2e-pods-${id}`;
  let agent: AgentProcess;
  let cri: CriClient;

  const apply = async (doc: object) => {
    const child = execFile('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, 'apply', '-f', '-']);
    const done = new Promise<void>((res, rej) =>
      child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`kubectl apply exited ${code}`)))),
    );
    child.stdin!.end(JSON.stringify(doc));
    await done;
  };
  const pod = (name: string) => getOrUndefined<PodObject>('pod', '-n', ns, name);
  const podSpec = (containers: object[], extra: object = {}) => ({
    nodeSelector: { 'kubernetes.io/hostname': nodeName },
    terminationGracePeriodSeconds: 5,
    containers,
    ...extra,
  });
  const runningContainers = async (uid: string) =>
    (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_UID]: uid } } })).containers.filter(
      (c) => c.state === ContainerState.CONTAINER_RUNNING,
    );

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, []);
    agent.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(agent.dir, 'kubeconfig'))}`);
    await agent.start();
    await pollUntil('the node to be Ready', async () => condition(await getOrUndefined('node', nodeName), 'Ready')?.status === 'True', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    cri?.close();
    await deleteNodeObjects(nodeName);
  });

  it('runs a Deployment of 3 replicas with default settings: rollout completes, pods show IP, node and READY 1/1', async () => {
    await apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: podSpec([{ name: 'web', image: IMAGE, command: ['sleep', '3600'] }]),
        },
      },
    });
    await kubectl('-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=180s');
    const wide = await kubectl('-n', ns, 'get', 'pods', '-l', 'app=web', '-o', 'wide', '--no-headers');
    const lines = wide.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const [, ready, status, , , ip, node] = line.split(/\s+/);
      expect(ready).toBe('1/1');
      expect(status).toBe('Running');
      expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(node).toBe(nodeName);
    }
  });

  it('completes a Job that exits 0 and fails one that exits 1 with the exit code in its status', async () => {
    const job = (name: string, code: number) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: {
        backoffLimit: 0,
        template: { spec: podSpec([{ name: 'c', image: IMAGE, command: ['sh', '-c', `exit ${code}`] }], { restartPolicy: 'Never' }) },
      },
    });
    await apply(job('ok', 0));
    await apply(job('bad', 1));
    await kubectl('-n', ns, 'wait', '--for=condition=complete', 'job/ok', '--timeout=120s');
    await kubectl('-n', ns, 'wait', '--for=condition=failed', 'job/bad', '--timeout=120s');
    const bad = await kubectlJson<{ items: PodObject[] }>('-n', ns, 'get', 'pods', '-l', 'job-name=bad');
    expect(bad.items[0].status?.phase).toBe('Failed');
    expect(bad.items[0].status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('stops a deleted pod with SIGTERM within its grace period, then the object disappears', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'graceful' },
      // The trap writes to a hostPath: once the object is gone the container (and its log) may already have been
      // garbage-collected, but the file outlives it.
      spec: podSpec(
        [
          {
            name: 'c',
            image: IMAGE,
            command: ['sh', '-c', 'trap "echo got-TERM > /out/term; exit 0" TERM; while :; do sleep 1; done'],
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
          },
        ],
        { volumes: [{ name: 'out', hostPath: { path: join(agent.dir, 'graceful-out'), type: 'DirectoryOrCreate' } }] },
      ),
    });
    const running = await pollUntil(
      'graceful running',
      async () => {
        const p = await pod('graceful');
        return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    await kubectl('-n', ns, 'delete', 'pod', 'graceful', '--grace-period=5', '--wait=false');
    await pollUntil('the deleted pod object to disappear', async () => (await pod('graceful')) === undefined, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(await runningContainers(running.metadata.uid)).toEqual([]);
    expect(readFileSync(join(agent.dir, 'graceful-out', 'term'), 'utf8')).toContain('got-TERM');
  });

  it('takes env from a Secret, a ConfigMap and the services, pulls with imagePullSecrets credentials, and reports a missing secret', async () => {
    // A service in the pod's namespace (enableServiceLinks defaults to true) and the master service.
    await kubectl('-n', ns, 'create', 'service', 'clusterip', 'web', '--tcp=80:8080');
    const clusterIP = async (namespace: string, name: string) =>
      (await kubectl('-n', namespace, 'get', 'service', name, '-o', 'jsonpath={.spec.clusterIP}')).trim();
    const [masterIP, webIP] = [await clusterIP('default', 'kubernetes'), await clusterIP(ns, 'web')];
    const registry = await startLocalRegistry({
      containerdAddress: CONTAINERD_ENDPOINT.replace(/^unix:\/\//, ''),
      image: IMAGE,
      username: 'puller',
      password: 's3cret',
    });
    const privateImage = `${registry.host}/private/busybox:1.0`;
    try {
      await kubectl('-n', ns, 'create', 'secret', 'generic', 'db', '--from-literal=password=pw-from-secret');
      await kubectl('-n', ns, 'create', 'configmap', 'cfg', '--from-literal=MODE=prod', '--from-literal=1st=x');
      await kubectl(
        '-n',
        ns,
        'create',
        'secret',
        'docker-registry',
        'regcred',
        `--docker-server=${registry.host}`,
        '--docker-username=puller',
        '--docker-password=s3cret',
      );
      const container = (image: string) => ({
        name: 'c',
        image,
        imagePullPolicy: 'Always',
        command: ['sh', '-c', 'sleep 3600'],
        env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }],
        envFrom: [{ configMapRef: { name: 'cfg' } }],
      });
      const pods = [
        { name: 'private', spec: podSpec([container(privateImage)], { imagePullSecrets: [{ name: 'regcred' }] }) },
        { name: 'nocred', spec: podSpec([container(privateImage)]) },
        {
          name: 'nosecret',
          spec: podSpec([{ name: 'c', image: IMAGE, env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }] }]),
        },
      ];
      for (const p of pods) await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: p.name }, spec: p.spec });
      const waiting = (name: string, reason: RegExp) =>
        pollUntil(
          `${name} waiting with ${reason}`,
          async () => {
            const st = (await pod(name))?.status?.containerStatuses?.[0]?.state?.waiting;
            return st && reason.test(st.reason ?? '') && st;
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        );
      const running = await pollUntil(
        'private running',
        async () => {
          const p = await pod('private');
          return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      const [ctr] = await runningContainers(running.metadata.uid);
      const out = await cri.execSync({
        containerId: ctr.id,
        cmd: ['sh', '-c', 'echo "$PW $MODE $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT $WEB_SERVICE_HOST $WEB_PORT"'],
        timeout: 10n,
      });
      expect(Buffer.from(out.stdout).toString().trim()).toBe(`pw-from-secret prod ${masterIP} 443 ${webIP} tcp://${webIP}:80`);
      expect(registry.pulls.some((r) => r.user === 'puller' && r.path.includes('/private/busybox/manifests/'))).toBe(true);
      await waiting('nocred', /^(ErrImagePull|ImagePullBackOff)$/);
      const missing = await waiting('nosecret', /^CreateContainerConfigError$/);
      expect(missing.message).toContain('secrets "nope" not found');
      const events = await kubectlJson<{ items: { reason: string; involvedObject: { name: string } }[] }>('-n', ns, 'get', 'events');
      expect(events.items.some((e) => e.reason === 'InvalidEnvironmentVariableNames' && e.involvedObject.name === 'private')).toBe(true);
    } finally {
      for (const name of ['private', 'nocred', 'nosecret'])
        await kubectl('-n', ns, 'delete', 'pod', name, '--grace-period=0', '--wait=false').catch(() => undefined);
      await registry.close();
      await pollUntil(
        'private pod containers gone',
        async () => (await runningContainers((await pod('private'))?.metadata.uid ?? 'gone')).length === 0,
        {
          timeoutMs: 60_000,
          intervalMs: 500,
        },
      ).catch(() => undefined);
      // Only the registry's names go (tag and digest): CRI RemoveImage would remove the image with all its names.
      const ctr = ['--address', CONTAINERD_ENDPOINT.replace(/^unix:\/\//, ''), '-n', 'k8s.io', 'images'];
      const names = (await run('ctr', [...ctr, 'ls', '-q']).catch(() => ({ stdout: '' }))).stdout.split('\n');
      const ours = names.filter((n) => n.startsWith(`${registry.host}/`));
      if (ours.length > 0) await run('ctr', [...ctr, 'rm', ...ours]).catch(() => undefined);
    }
  });

  it('cleans up, after it starts, a pod deleted while the agent was stopped', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'while-down' },
      spec: podSpec([{ name: 'c', image: IMAGE, command: ['sleep', '3600'] }]),
    });
    const p = await pollUntil(
      'while-down running',
      async () => {
        const x = await pod('while-down');
        return x?.status?.containerStatuses?.[0]?.state?.running ? x : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    await agent.stop();
    await kubectl('-n', ns, 'delete', 'pod', 'while-down', '--wait=false');
    expect((await pod('while-down'))?.metadata.deletionTimestamp).toBeTruthy();
    await agent.start();
    await pollUntil('the pod deleted while the agent was down to disappear', async () => (await pod('while-down')) === undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    expect(await runningContainers(p.metadata.uid)).toEqual([]);
  });

  it('shows CrashLoopBackOff and a growing restartCount for a crash-looping container', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'crasher' },
      spec: podSpec([{ name: 'c', image: IMAGE, command: ['sh', '-c', 'exit 3'] }]),
    });
    const counts: number[] = [];
    await pollUntil(
      'CrashLoopBackOff with restartCount >= 2',
      async () => {
        const cs = (await pod('crasher'))?.status?.containerStatuses?.[0];
        if (cs && counts.at(-1) !== cs.restartCount) counts.push(cs.restartCount);
        return cs?.state?.waiting?.reason === 'CrashLoopBackOff' && cs.restartCount >= 2;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(counts.at(-1)).toBeGreaterThan(counts[0]);
    expect(await kubectl('-n', ns, 'get', 'pod', 'crasher', '--no-headers')).toMatch(/CrashLoopBackOff/);
  });

  it('mirrors a static pod in the apiserver and recreates the mirror pod after kubectl delete', async () => {
    agent.writeManifest('static', podManifest('static-web', ns, [{ name: 'web', command: ['sleep', '3600'] }]));
    const mirrorName = `static-web-${nodeName}`;
    const first = await pollUntil(
      'the mirror pod, Running',
      async () => {
        const m = await pod(mirrorName);
        return m?.status?.phase === 'Running' ? m : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(first.metadata.annotations?.['kubernetes.io/config.mirror']).toBeTruthy();
    expect(first.metadata.ownerReferences?.[0]?.kind).toBe('Node');
    expect(await kubectl('get', 'pods', '-A')).toContain(mirrorName);
    await kubectl('-n', ns, 'delete', 'pod', mirrorName, '--wait=false');
    const second = await pollUntil(
      'a new mirror pod, Running',
      async () => {
        const m = await pod(mirrorName);
        return m && m.metadata.uid !== first.metadata.uid && m.status?.phase === 'Running' ? m : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(second.status?.containerStatuses?.[0]?.ready).toBe(true);
    agent.deleteManifest('static');
    await pollUntil('the mirror pod to go with its static pod', async () => (await pod(mirrorName)) === undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
    });
  });

  it('loses nothing across an apiserver restart: no pod restarts, statuses current within 15 s of its return', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'finisher' },
      spec: podSpec([{ name: 'c', image: IMAGE, command: ['sh', '-c', 'sleep 20; exit 0'] }], { restartPolicy: 'Never' }),
    });
    const finisher = await pollUntil(
      'finisher running',
      async () => {
        const p = await pod('finisher');
        return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const before = await kubectlJson<{ items: PodObject[] }>('-n', ns, 'get', 'pods', '-l', 'app=web');
    const ids = (items: PodObject[]) =>
      items
        .map((p) => `${p.metadata.name}:${p.status?.containerStatuses?.[0]?.containerID}:${p.status?.containerStatuses?.[0]?.restartCount}`)
        .sort();

    const pid = Number(readFileSync(`${CP_DIR}/pids/kube-apiserver.pid`, 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    // Gone, or a zombie: PID 1 here may reap orphans late.
    const exited = () => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z';
      } catch {
        return true;
      }
    };
    // kube-apiserver waits up to 60 s for open watch streams before it exits (longer on a loaded machine):
    // after 90 s it is killed, which is a restart all the same for the kubelet.
    await pollUntil('the apiserver to stop', exited, { timeoutMs: 90_000, intervalMs: 200 }).catch(async () => {
      process.kill(pid, 'SIGKILL');
      await pollUntil('the apiserver to die', exited, { timeoutMs: 30_000, intervalMs: 200 });
    });
    // While it is down, the finisher completes: a status change the kubelet must deliver later.
    await pollUntil('the finisher container to exit', async () => (await runningContainers(finisher.metadata.uid)).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    await run('bash', [CP_SCRIPT, 'up'], { maxBuffer: 16 * 1024 * 1024 });
    const back = Date.now();
    await pollUntil('the finisher status to show Succeeded', async () => (await pod('finisher'))?.status?.phase === 'Succeeded', {
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    const statusLagMs = Date.now() - back;
    const after = await kubectlJson<{ items: PodObject[] }>('-n', ns, 'get', 'pods', '-l', 'app=web');
    expect(ids(after.items)).toEqual(ids(before.items));
    expect(statusLagMs).toBeLessThanOrEqual(15_000);
  });
});
