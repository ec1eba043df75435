/**
 * PersistentVolumeClaims on a kubelet-ts node (issue 37), with the real
 * control plane: a StatefulSet's claim is bound by the scheduler and the
 * controller-manager to a local PV with node affinity to this node, the PV is
 * bind-mounted under the pod's volume directory, fsGroup 2000 owns its files,
 * data survives the pod's deletion and recreation (OnRootMismatch then skips
 * the walk); a pod whose claim is unbound waits with upstream's FailedMount
 * event and starts once its PV is bound; a read-only claim of a hostPath PV
 * is read-only; after a SIGKILL of the agent, the running pod keeps its mount
 * and the mount of a pod deleted meanwhile is cleaned.
 */
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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
const LOCAL = 'kubernetes.io~local-volume';

interface PodObject {
  metadata: { name: string; uid: string };
  status?: { phase?: string; containerStatuses?: { state?: { waiting?: { reason?: string }; running?: object } }[] };
}

describeCluster('persistent volumes on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-pv-${id}`;
  const ns = `kts-e2e-pv-${id}`;
  const storageClass = `kts-e2e-local-${id}`;
  const pvNames = { db: `kts-e2e-${id}-db`, late: `kts-e2e-${id}-late`, hp: `kts-e2e-${id}-hp` };
  let agent: AgentProcess;
  let disks: string;

  const apply = (doc: object) => kubectlApply(ns, doc);
  const pod = (name: string) => getOrUndefined<PodObject>('pod', '-n', ns, name);
  const runningPod = (name: string, timeoutMs = 60_000, notUid?: string) =>
    agent.until(
      `pod ${name} running`,
      async () => {
        const p = await pod(name);
        return (
          p?.metadata.uid !== notUid && p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) && p
        );
      },
      timeoutMs,
    );
  const logOf = (p: PodObject) => {
    const dir = join(agent.dir, 'pod-logs', `${ns}_${p.metadata.name}_${p.metadata.uid}`, 'app');
    return existsSync(dir)
      ? readdirSync(dir)
          .map((f) => readFileSync(join(dir, f), 'utf8'))
          .join('')
      : '';
  };
  const logLine = (p: PodObject, re: RegExp) =>
    agent.until(`output matching ${re} from ${p.metadata.name}`, () => re.exec(logOf(p)) ?? undefined, 30_000);
  const podDir = (p: PodObject) => join(agent.dir, 'root/pods', p.metadata.uid);
  const localMount = (p: PodObject, pv: string) => join(podDir(p), 'volumes', LOCAL, pv);
  /** The mount id of `path` in /proc/self/mountinfo, or undefined when it is not a mount point. */
  const mountId = (path: string) =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[4] === path)?.[0];
  const localPV = (name: string, path: string, claimRef?: object) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: storageClass,
      local: { path },
      claimRef,
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] }] },
      },
    },
  });
  const claim = (name: string, extra: object = {}) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: storageClass, ...extra },
  });
  const claimPod = (name: string, claimName: string, script: string, readOnly?: boolean) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: IMAGE, command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName, readOnly } }],
    },
  });

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    await pollUntil(
      'the default service account token secret',
      async () => ((await getOrUndefined<{ secrets?: object[] }>('serviceaccount', '-n', ns, 'default'))?.secrets?.length ?? 0) > 0,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, ['--v=3']);
    disks = join(agent.dir, 'disks');
    for (const d of Object.keys(pvNames)) mkdirSync(join(disks, d), { recursive: true });
    writeFileSync(join(disks, 'hp', 'seed'), 'from-the-host');
    // Local PVs as upstream's docs set them up: a no-provisioner class binding at the first consumer.
    await apply({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: storageClass },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    // The PV's gid annotation: upstream adds it to the containers' supplemental groups.
    await apply({
      ...localPV(pvNames.db, join(disks, 'db')),
      metadata: { name: pvNames.db, annotations: { 'pv.beta.kubernetes.io/gid': '3456' } },
    });
    await startClusterAgent(agent);
  }, 120_000);

  afterAll(async () => {
    await kubectl('-n', ns, 'delete', 'statefulset,pod', '--all', '--wait=false').catch(() => undefined);
    // Let the agent tear the volumes down as for any deleted pod; whatever is left, cleanup() unmounts.
    await pollUntil('the pods gone', async () => (await kubectl('-n', ns, 'get', 'pods', '-o', 'name')).trim() === '', {
      timeoutMs: 45_000,
      intervalMs: 500,
    }).catch(() => undefined);
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
    await kubectl('delete', 'pv', ...Object.values(pvNames), '--ignore-not-found', '--wait=false').catch(() => undefined);
    await kubectl('delete', 'storageclass', storageClass, '--ignore-not-found', '--wait=false').catch(() => undefined);
  }, 120_000);

  it('a StatefulSet pod mounts its local PV with fsGroup 2000; the data survives its recreation, OnRootMismatch skips the walk', async () => {
    await apply({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        replicas: 1,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            terminationGracePeriodSeconds: 2,
            securityContext: { fsGroup: 2000, fsGroupChangePolicy: 'OnRootMismatch' },
            containers: [
              {
                name: 'app',
                image: IMAGE,
                command: [
                  'sh',
                  '-c',
                  'echo "start $(date +%s%N)" >> /data/starts; echo "starts=$(wc -l < /data/starts)"; echo "groups $(id -G)"; ' +
                    'for f in /data /data/*; do echo "owner $(stat -c %g $f) $f"; done; echo listed; sleep 3600',
                ],
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: claim('data').spec }],
      },
    });
    const first = await runningPod('db-0', 90_000);
    await logLine(first, /listed/);
    expect(logOf(first)).toContain('starts=1');
    expect(logOf(first)).toContain('owner 2000 /data/starts');
    expect(logOf(first)).toMatch(/ groups( \d+)* 2000( \d+)* 3456\n/);
    const pv = await kubectlJson<{ spec: { claimRef?: { name: string } }; status: { phase: string } }>('get', 'pv', pvNames.db);
    expect(pv.spec.claimRef?.name).toBe('data-db-0');
    expect(mountId(localMount(first, pvNames.db))).toBeDefined();

    // A file the host gives group 0: OnRootMismatch finds the root already 2000 and leaves it.
    writeFileSync(join(disks, 'db', 'foreign'), 'x');
    chownSync(join(disks, 'db', 'foreign'), 0, 0);
    await kubectl('-n', ns, 'delete', 'pod', 'db-0', '--wait=false');
    const second = await runningPod('db-0', 90_000, first.metadata.uid);
    await logLine(second, /listed/);
    expect(logOf(second)).toContain('starts=2');
    expect(logOf(second)).toContain('owner 0 /data/foreign');
    expect(logOf(second)).toContain('owner 2000 /data/starts');
    expect(mountId(localMount(second, pvNames.db))).toBeDefined();
    await agent.until(
      'the first pod directory and mount gone',
      () => !existsSync(podDir(first)) && !mountId(localMount(first, pvNames.db)),
    );
  }, 150_000);

  it('a pod whose claim is unbound waits with a FailedMount event and starts once its PV is bound; a read-only hostPath PV claim', async () => {
    await apply(claim('late'));
    await apply(claimPod('late', 'late', 'echo "seen=$(cat /data/seed)"; sleep 3600'));
    // The hostPath PV first, pre-bound to its claim: the claim binds as soon as it is created.
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pvNames.hp },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        hostPath: { path: join(disks, 'hp'), type: 'Directory' },
        claimRef: { namespace: ns, name: 'hp' },
      },
    });
    await apply(claim('hp', { storageClassName: '' }));
    await apply(
      claimPod('hp', 'hp', 'cat /data/seed; echo; touch /data/new 2>&1 | grep -o "Read-only file system"; echo done; sleep 3600', true),
    );

    interface EventList {
      items: { message: string; type: string; source?: { component?: string } }[];
    }
    const message =
      `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: ` +
      `error processing PVC ${ns}/late: PVC is not bound`;
    const event = await agent.until('a FailedMount event for the unbound claim', async () =>
      (
        await kubectlJson<EventList>('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=late,reason=FailedMount')
      ).items.find((e) => e.message === message),
    );
    expect(event).toMatchObject({ type: 'Warning', source: { component: 'kubelet' } });
    const waiting = await pod('late');
    expect(waiting?.status?.phase).toBe('Pending');
    expect(waiting?.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');

    // A PV pre-bound to the claim (spec.claimRef with its uid): the controller-manager completes the binding at once.
    writeFileSync(join(disks, 'late', 'seed'), 'late-data');
    const lateClaim = await kubectlJson<{ metadata: { uid: string } }>('get', 'pvc', '-n', ns, 'late');
    await apply(localPV(pvNames.late, join(disks, 'late'), { namespace: ns, name: 'late', uid: lateClaim.metadata.uid }));
    const late = await runningPod('late', 60_000);
    await logLine(late, /seen=late-data/);
    expect(mountId(localMount(late, pvNames.late))).toBeDefined();

    const hp = await runningPod('hp');
    const out = await logLine(hp, /done/);
    expect(out.input).toContain('from-the-host');
    expect(out.input).toContain('Read-only file system');
    // A hostPath PV is used in place: nothing is mounted for it under the pod.
    expect(existsSync(join(podDir(hp), 'volumes', 'kubernetes.io~host-path'))).toBe(false);
  }, 120_000);

  it('after a SIGKILL the restarted agent keeps the running pod mount and cleans that of a pod deleted meanwhile', async () => {
    const db = (await pod('db-0'))!;
    const late = (await pod('late'))!;
    const dbMount = mountId(localMount(db, pvNames.db));
    expect(dbMount).toBeDefined();
    expect(mountId(localMount(late, pvNames.late))).toBeDefined();
    await agent.stop('SIGKILL');
    await kubectl('-n', ns, 'delete', 'pod', 'late', '--wait=false');
    await agent.start();
    await agent.until(
      'the deleted pod gone with its mount and directory',
      async () => (await pod('late')) === undefined && !mountId(localMount(late, pvNames.late)) && !existsSync(podDir(late)),
    );
    expect(readFileSync(join(disks, 'late', 'seed'), 'utf8')).toBe('late-data');
    const after = await runningPod('db-0');
    expect(after.metadata.uid).toBe(db.metadata.uid);
    expect(mountId(localMount(db, pvNames.db))).toBe(dbMount);
  }, 120_000);
});
