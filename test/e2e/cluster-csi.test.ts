/**
 * The CSI node side on a kubelet-ts node (issue 37), with the real control
 * plane and containerd. No CSI driver installs on this machine, so the driver
 * is the test plugin (test/helpers/csi-test-plugin.ts): a separate process
 * serving CSI v1 over a unix socket and registering through the agent's
 * plugins_registry directory, as node-driver-registrar does. Its CSIDriver
 * object says attachRequired: false (no attach-detach controller attach is
 * needed) and podInfoOnMount: true.
 *
 * With it registered, the CSINode object lists the driver; a pod of a PV of
 * the driver gets it staged and published (the plugin's call log shows
 * upstream's paths); deleting the pod unpublishes and unstages it. A PV of a
 * driver that is not registered gives upstream's FailedMount event. Stopping
 * the plugin removes the driver from the CSINode.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCsiTestPlugin, type CsiCall, type CsiTestPlugin } from '../helpers/csi-test-plugin.js';
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
  type NodeObject,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface PodObject {
  metadata: { name: string; uid: string };
  status?: { phase?: string; containerStatuses?: { state?: { running?: object } }[] };
}

interface CSINodeObject {
  spec: { drivers: { name: string; nodeID: string; topologyKeys: string[] | null }[] | null };
}

describeCluster('CSI volumes on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-csi-${id}`;
  const ns = `kts-e2e-csi-${id}`;
  const driver = `csi-${id}.test.kubelet-ts.io`;
  const missing = `missing-${id}.example.com`;
  const pvNames = { data: `kts-e2e-csi-${id}-data`, orphan: `kts-e2e-csi-${id}-orphan`, attach: `kts-e2e-csi-${id}-attach` };
  let agent: AgentProcess;
  let plugin: CsiTestPlugin | undefined;

  const apply = (doc: object) => kubectlApply(ns, doc);
  const pod = (name: string) => getOrUndefined<PodObject>('pod', '-n', ns, name);
  const rootDir = () => join(agent.dir, 'root');
  const mounted = (path: string) =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === path);
  const logOf = (p: PodObject) => {
    const dir = join(agent.dir, 'pod-logs', `${ns}_${p.metadata.name}_${p.metadata.uid}`, 'app');
    return existsSync(dir)
      ? readdirSync(dir)
          .map((f) => readFileSync(join(dir, f), 'utf8'))
          .join('')
      : '';
  };
  const csiPV = (name: string, drv: string, claim: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: '',
      csi: { driver: drv, volumeHandle: `${name}-handle`, volumeAttributes: { origin: 'e2e' } },
      claimRef: { namespace: ns, name: claim },
    },
  });
  const claim = (name: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
  });
  const claimPod = (name: string, claimName: string, script: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      containers: [{ name: 'app', image: IMAGE, command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  });
  const calls = (method: string): CsiCall[] => plugin?.calls().filter((c) => c.method === method) ?? [];

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    await kubectlApply('default', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: driver },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent'] },
    });
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, ['--v=3']);
    await startClusterAgent(agent);
    plugin = await startCsiTestPlugin({
      registryDir: join(rootDir(), 'plugins_registry'),
      csiSocket: join(agent.dir, 'csi.sock'),
      driver,
      nodeId: `${nodeName}-id`,
      dataDir: join(agent.dir, 'csi-data'),
      log: join(agent.dir, 'csi-calls.jsonl'),
    });
  }, 120_000);

  afterAll(async () => {
    await kubectl('-n', ns, 'delete', 'pod', '--all', '--wait=false').catch(() => undefined);
    await pollUntil('the pods gone', async () => (await kubectl('-n', ns, 'get', 'pods', '-o', 'name')).trim() === '', {
      timeoutMs: 45_000,
      intervalMs: 500,
    }).catch(() => undefined);
    await plugin?.stop();
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
    await kubectl('delete', 'csinode', nodeName, '--ignore-not-found', '--wait=false').catch(() => undefined);
    await kubectl('delete', 'pv', ...Object.values(pvNames), '--ignore-not-found', '--wait=false').catch(() => undefined);
    await kubectl('delete', 'csidriver', driver, missing, '--ignore-not-found', '--wait=false').catch(() => undefined);
  }, 120_000);

  it('registers the plugin: the CSINode object lists the driver with its node ID, the Node carries the node-id annotation', async () => {
    const csiNode = await agent.until('the CSINode listing the driver', async () => {
      const obj = await getOrUndefined<CSINodeObject>('csinode', nodeName);
      return obj?.spec.drivers?.some((d) => d.name === driver) && obj;
    });
    expect(csiNode.spec.drivers).toEqual([{ name: driver, nodeID: `${nodeName}-id`, topologyKeys: null }]);
    const node = await kubectlJson<NodeObject & { metadata: { ownerReferences?: object[] } }>('get', 'node', nodeName);
    expect(JSON.parse(node.metadata.annotations?.['csi.volume.kubernetes.io/nodeid'] ?? '{}')).toEqual({ [driver]: `${nodeName}-id` });
    const owner = await kubectlJson<{ metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] } }>(
      'get',
      'csinode',
      nodeName,
    );
    expect(owner.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Node', name: nodeName, uid: node.metadata.uid })]);
    expect(calls('NotifyRegistrationStatus')).toEqual([expect.objectContaining({ pluginRegistered: true, error: '' })]);
    expect(calls('NodeGetInfo')).toHaveLength(1);
  });

  it('stages and publishes a PV of the driver into a pod, then unpublishes and unstages it after the pod is deleted', async () => {
    await apply(csiPV(pvNames.data, driver, 'data'));
    await apply(claim('data'));
    await apply(claimPod('app', 'data', 'echo hello > /data/greeting; echo "read=$(cat /data/greeting)"; sleep 3600'));
    const running = await agent.until(
      'pod app running',
      async () => {
        const p = await pod('app');
        return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) && p;
      },
      60_000,
    );
    await agent.until('the container output', () => logOf(running).includes('read=hello'), 30_000);
    const staging = join(rootDir(), 'plugins/kubernetes.io/csi/pv', pvNames.data, 'globalmount');
    const target = join(rootDir(), 'pods', running.metadata.uid, 'volumes/kubernetes.io~csi', pvNames.data, 'mount');
    expect(mounted(staging)).toBe(true);
    expect(mounted(target)).toBe(true);
    const handle = `${pvNames.data}-handle`;
    expect(calls('NodeStageVolume')).toEqual([
      expect.objectContaining({
        volumeId: handle,
        stagingTargetPath: staging,
        volumeContext: { origin: 'e2e' },
        volumeCapability: expect.objectContaining({ accessMode: { mode: 1 } }) as object,
      }),
    ]);
    expect(calls('NodePublishVolume')).toEqual([
      expect.objectContaining({
        volumeId: handle,
        stagingTargetPath: staging,
        targetPath: target,
        readonly: false,
        volumeContext: {
          origin: 'e2e',
          'csi.storage.k8s.io/pod.name': 'app',
          'csi.storage.k8s.io/pod.namespace': ns,
          'csi.storage.k8s.io/pod.uid': running.metadata.uid,
          'csi.storage.k8s.io/serviceAccount.name': 'default',
          'csi.storage.k8s.io/ephemeral': 'false',
        },
      }),
    ]);
    const volData = JSON.parse(readFileSync(join(target, '../vol_data.json'), 'utf8')) as Record<string, string>;
    expect(volData).toMatchObject({ specVolID: pvNames.data, volumeHandle: handle, driverName: driver, nodeName });
    // The data lives in the plugin's directory for the volume.
    expect(readFileSync(join(agent.dir, 'csi-data', handle, 'greeting'), 'utf8')).toBe('hello\n');

    await kubectl('-n', ns, 'delete', 'pod', 'app', '--wait=false');
    await agent.until(
      'the volume unpublished and unstaged',
      () => calls('NodeUnstageVolume').length > 0 && !existsSync(join(rootDir(), 'pods', running.metadata.uid)),
      60_000,
    );
    expect(calls('NodeUnpublishVolume')).toEqual([expect.objectContaining({ volumeId: handle, targetPath: target })]);
    expect(calls('NodeUnstageVolume')).toEqual([expect.objectContaining({ volumeId: handle, stagingTargetPath: staging })]);
    const order = plugin!
      .calls()
      .map((c) => c.method)
      .filter((m) => /^Node(Stage|Unstage|Publish|Unpublish)Volume$/.test(m));
    expect(order).toEqual(['NodeStageVolume', 'NodePublishVolume', 'NodeUnpublishVolume', 'NodeUnstageVolume']);
    expect(mounted(target) || mounted(staging)).toBe(false);
    expect(existsSync(join(rootDir(), 'plugins/kubernetes.io/csi/pv', pvNames.data))).toBe(false);
    expect(readFileSync(join(agent.dir, 'csi-data', handle, 'greeting'), 'utf8')).toBe('hello\n');
  }, 120_000);

  it('a PV of a driver that is not registered gets a FailedMount event with upstream message', async () => {
    // attachRequired: false, as for the test driver: the kubelet goes on to MountDevice instead of waiting for an attach.
    await kubectlApply('default', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: missing },
      spec: { attachRequired: false },
    });
    await apply(csiPV(pvNames.orphan, missing, 'orphan'));
    await apply(claim('orphan'));
    await apply(claimPod('orphan', 'orphan', 'sleep 3600'));
    const message =
      `MountVolume.MountDevice failed for volume "${pvNames.orphan}" : kubernetes.io/csi: attacher.MountDevice failed to create ` +
      `newCsiDriverClient: driver name ${missing} not found in the list of registered CSI drivers`;
    interface EventList {
      items: { message: string; type: string; reason: string }[];
    }
    const event = await agent.until('the FailedMount event', async () =>
      (
        await kubectlJson<EventList>('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=orphan,reason=FailedMount')
      ).items.find((e) => e.message === message),
    );
    expect(event.type).toBe('Warning');
    expect((await pod('orphan'))?.status?.phase).toBe('Pending');
  }, 90_000);

  it('a PV of a driver that needs attach is in status.volumesInUse while its pod waits for the attach', async () => {
    // No CSIDriver object for this driver: upstream treats it as attachable. Nothing attaches it here (no external attacher).
    const attachDriver = `attach-${id}.example.com`;
    const unique = `kubernetes.io/csi/${attachDriver}^${pvNames.attach}-handle`;
    await apply(csiPV(pvNames.attach, attachDriver, 'attach'));
    await apply(claim('attach'));
    await apply(claimPod('attach', 'attach', 'sleep 3600'));
    interface EventList {
      items: { message: string }[];
    }
    const event = await agent.until('the WaitForAttach FailedMount event', async () =>
      (
        await kubectlJson<EventList>('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=attach,reason=FailedMount')
      ).items.find((e) =>
        e.message.startsWith(`MountVolume.WaitForAttach failed for volume "${pvNames.attach}" : kubernetes.io/csi: volume`),
      ),
    );
    expect(event.message).toMatch(/VolumeAttachment csi-[0-9a-f]{64}/);
    await agent.until('the volume in status.volumesInUse', async () =>
      (
        (await kubectlJson<NodeObject & { status: { volumesInUse?: string[] } }>('get', 'node', nodeName)).status.volumesInUse ?? []
      ).includes(unique),
    );
    await kubectl('-n', ns, 'delete', 'pod', 'attach', '--wait=false');
    await agent.until(
      'the volume gone from status.volumesInUse',
      async () =>
        !(
          (await kubectlJson<NodeObject & { status: { volumesInUse?: string[] } }>('get', 'node', nodeName)).status.volumesInUse ?? []
        ).includes(unique),
    );
  }, 90_000);

  it('stopping the plugin removes the driver from the CSINode and the node annotation', async () => {
    await plugin!.stop();
    await agent.until('the driver gone from the CSINode', async () => {
      const obj = await getOrUndefined<CSINodeObject>('csinode', nodeName);
      return obj !== undefined && !(obj.spec.drivers ?? []).some((d) => d.name === driver);
    });
    const node = await kubectlJson<NodeObject>('get', 'node', nodeName);
    expect(node.metadata.annotations?.['csi.volume.kubernetes.io/nodeid']).toBeUndefined();
  }, 60_000);
});
