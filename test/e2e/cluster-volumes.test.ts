/**
 * Volumes that read the apiserver (issue 9), with pods from the real control
 * plane on a kubelet-ts node: a configMap update reaches a running pod, secret
 * files have their modes and live on a tmpfs, the default service-account
 * token (the 1.20 `default-token-*` secret volume) and a projected, pod-bound
 * token are readable, a pod waiting for a missing configMap shows
 * ContainerCreating with a FailedMount event and starts once it is created,
 * and a deleted pod leaves no directory or mount. The node reads these objects
 * as the Node authorizer allows it: only those its pods reference.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
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
  metadata: { name: string; uid: string };
  spec: { volumes?: { name: string; secret?: { secretName: string } }[] };
  status?: {
    phase?: string;
    containerStatuses?: { name: string; state?: { waiting?: { reason?: string }; running?: object } }[];
  };
}

describeCluster('volumes from the apiserver on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-vol-${id}`;
  const ns = `kts-e2e-vol-${id}`;
  let agent: AgentProcess;

  const apply = (doc: object) => kubectlApply(ns, doc);
  const pod = (name: string) => getOrUndefined<PodObject>('pod', '-n', ns, name);
  const createPod = (name: string, containers: object[], volumes: object[], extra: object = {}) =>
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, terminationGracePeriodSeconds: 2, containers: containers.map((c) => ({ image: IMAGE, ...c })), volumes, ...extra },
    });
  const runningPod = (name: string, timeoutMs = 90_000) =>
    agent.until(
      `pod ${name} running`,
      async () => {
        const p = await pod(name);
        return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) && p;
      },
      timeoutMs,
    );
  const logOf = (p: PodObject, container = 'app') => {
    const dir = join(agent.dir, 'pod-logs', `${ns}_${p.metadata.name}_${p.metadata.uid}`, container);
    return existsSync(dir)
      ? readdirSync(dir)
          .map((f) => readFileSync(join(dir, f), 'utf8'))
          .join('')
      : '';
  };
  const volumeDir = (p: PodObject, plugin: string, name: string) => join(agent.dir, 'root/pods', p.metadata.uid, 'volumes', plugin, name);

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    // The controller-manager gives the namespace its default service account and (v1.20) its token secret.
    await pollUntil(
      'the default service account token secret',
      async () => {
        const sa = await getOrUndefined<{ secrets?: { name: string }[] }>('serviceaccount', '-n', ns, 'default');
        return (sa?.secrets?.length ?? 0) > 0;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, ['--v=3']);
    await startClusterAgent(agent);
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('a configMap volume sees an update of the configMap within 90 s', async () => {
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { greeting: 'hello-v1' } });
    await createPod(
      'cm-reader',
      [
        {
          name: 'app',
          command: ['sh', '-c', 'while true; do echo "read: $(cat /cfg/greeting)"; sleep 1; done'],
          volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
        },
      ],
      [{ name: 'cfg', configMap: { name: 'settings' } }],
    );
    const p = await runningPod('cm-reader');
    await pollUntil('the first value', () => logOf(p).includes('read: hello-v1'), { timeoutMs: 30_000 });
    const t0 = Date.now();
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { greeting: 'hello-v2' } });
    await pollUntil('the container to read the update', () => logOf(p).includes('read: hello-v2'), { timeoutMs: 90_000, intervalMs: 200 });
    const seconds = (Date.now() - t0) / 1000;
    expect(seconds).toBeLessThan(90);
    expect(readFileSync(join(volumeDir(p, 'kubernetes.io~configmap', 'cfg'), 'greeting'), 'utf8')).toBe('hello-v2');
    console.log(`configMap update seen by the container after ${seconds.toFixed(1)} s`);
  });

  it('a secret volume has the requested file modes and lives on a tmpfs', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      stringData: { user: 'admin', pass: 'hunter2', extra: 'x' },
    });
    await createPod(
      'secret-reader',
      [
        {
          name: 'app',
          command: ['sh', '-c', 'grep " /creds " /proc/mounts; stat -L -c "%a %n" /creds/user /creds/p; cat /creds/p; echo; sleep 3600'],
          volumeMounts: [{ name: 'creds', mountPath: '/creds' }],
        },
      ],
      [
        {
          name: 'creds',
          secret: {
            secretName: 'creds',
            defaultMode: 0o400,
            items: [
              { key: 'user', path: 'user' },
              { key: 'pass', path: 'p', mode: 0o440 },
            ],
          },
        },
      ],
    );
    const p = await runningPod('secret-reader');
    const log = await pollUntil('the container output', () => (logOf(p).includes('hunter2') ? logOf(p) : undefined), { timeoutMs: 30_000 });
    expect(log).toMatch(/tmpfs \/creds tmpfs ro[, ]/);
    expect(log).toContain('400 /creds/user');
    expect(log).toContain('440 /creds/p');
    const dir = volumeDir(p, 'kubernetes.io~secret', 'creds');
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
    expect(mounts.filter((l) => l.split(' ')[4] === dir).map((l) => l.split(' - ')[1]?.split(' ')[0])).toEqual(['tmpfs']);
    expect(statSync(join(dir, 'user')).mode & 0o777).toBe(0o400);
    expect(existsSync(join(dir, 'extra'))).toBe(false);
  });

  it('a pod with the default service-account token volume starts and reads its token; a projected token is bound to the pod', async () => {
    await createPod(
      'token-reader',
      [
        {
          name: 'app',
          command: [
            'sh',
            '-c',
            'SA=/var/run/secrets/kubernetes.io/serviceaccount; echo "ns=$(cat $SA/namespace) tokenbytes=$(wc -c < $SA/token)"; sleep 3600',
          ],
          volumeMounts: [{ name: 'bound', mountPath: '/bound' }],
        },
      ],
      [
        {
          name: 'bound',
          projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'kts-e2e', expirationSeconds: 600 } }] },
        },
      ],
    );
    const p = await runningPod('token-reader');
    // The ServiceAccount admission plugin (v1.20) added the default-token secret volume and its mount.
    expect(p.spec.volumes?.some((v) => v.secret?.secretName.startsWith('default-token-'))).toBe(true);
    const line = await pollUntil('the token read', () => /ns=(\S+) tokenbytes=\s*(\d+)/.exec(logOf(p)) ?? undefined, { timeoutMs: 30_000 });
    expect(line[1]).toBe(ns);
    expect(Number(line[2])).toBeGreaterThan(100);
    const jwt = readFileSync(join(volumeDir(p, 'kubernetes.io~projected', 'bound'), 'token'), 'utf8');
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as {
      aud: string[];
      exp: number;
      iat: number;
      'kubernetes.io': { namespace: string; pod: { name: string; uid: string }; serviceaccount: { name: string } };
    };
    expect(claims.aud).toEqual(['kts-e2e']);
    expect(claims['kubernetes.io'].pod).toEqual({ name: 'token-reader', uid: p.metadata.uid });
    expect(claims['kubernetes.io'].serviceaccount.name).toBe('default');
    expect(claims.exp - claims.iat).toBe(600);
  });

  it('a pod whose configMap is missing waits in ContainerCreating with a FailedMount event and starts once it is created', async () => {
    await createPod(
      'waits-for-cm',
      [{ name: 'app', command: ['sh', '-c', 'cat /cfg/key; echo; sleep 3600'], volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
      [{ name: 'cfg', configMap: { name: 'late' } }],
    );
    interface EventList {
      items: { reason: string; message: string; type: string; source?: { component?: string } }[];
    }
    const event = await pollUntil(
      'a FailedMount event',
      async () =>
        (
          await kubectlJson<EventList>('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=waits-for-cm,reason=FailedMount')
        ).items.find((e) => e.message.includes('configmap "late" not found')),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(event).toMatchObject({
      type: 'Warning',
      message: 'MountVolume.SetUp failed for volume "cfg" : configmap "late" not found',
      source: { component: 'kubelet' },
    });
    const waiting = await pod('waits-for-cm');
    expect(waiting?.status?.phase).toBe('Pending');
    expect(waiting?.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');
    expect(await kubectl('-n', ns, 'get', 'pod', 'waits-for-cm', '--no-headers')).toMatch(/\s0\/1\s+ContainerCreating\s/);

    const t0 = Date.now();
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' }, data: { key: 'arrived' } });
    const p = await runningPod('waits-for-cm', 60_000);
    console.log(`pod running ${((Date.now() - t0) / 1000).toFixed(1)} s after its configMap was created`);
    await pollUntil('the container to read the value', () => logOf(p).includes('arrived'), { timeoutMs: 30_000 });
  });

  it('a deleted pod leaves no directory or mount; setup and teardown are in storage_operation_duration_seconds', async () => {
    const p = (await pod('secret-reader'))!;
    const dir = join(agent.dir, 'root/pods', p.metadata.uid);
    expect(existsSync(dir)).toBe(true);
    await kubectl('-n', ns, 'delete', 'pod', 'secret-reader', '--wait=false');
    await pollUntil(
      'the pod gone from the apiserver and its directory removed',
      async () => !existsSync(dir) && (await pod('secret-reader')) === undefined,
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail(60)}`);
    });
    expect(agent.mounts().filter((m) => m.includes(p.metadata.uid))).toEqual([]);

    const metrics = await (await fetch(agent.metricsUrl)).text();
    const count = (plugin: string, op: string) =>
      Number(
        new RegExp(
          `^storage_operation_duration_seconds_count\\{volume_plugin="${plugin.replace('.', '\\.')}",operation_name="${op}",status="success",migrated="false"\\} (\\d+)`,
          'm',
        ).exec(metrics)?.[1] ?? 0,
      );
    expect(count('kubernetes.io/secret', 'volume_mount')).toBeGreaterThan(0);
    expect(count('kubernetes.io/secret', 'volume_unmount')).toBeGreaterThan(0);
    expect(count('kubernetes.io/configmap', 'volume_mount')).toBeGreaterThan(0);
    expect(count('kubernetes.io/projected', 'volume_mount')).toBeGreaterThan(0);
    expect(metrics).toMatch(
      /storage_operation_duration_seconds_count\{volume_plugin="kubernetes\.io\/configmap",operation_name="volume_mount",status="fail-unknown",migrated="false"\} [1-9]/,
    );
  });
});
