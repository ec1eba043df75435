/**
 * The CSI node side against the test CSI plugin (test/helpers/csi-test-plugin.ts,
 * a separate process serving CSI v1 and pluginregistration v1 on unix
 * sockets): the plugin watcher registers it from the registry directory,
 * NodeGetInfo feeds the node info, a CSI PV is staged and published with
 * real bind mounts and upstream's paths, then unpublished and unstaged; the
 * driver is deregistered when its socket goes. Needs root (bind mounts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import { LinuxMounter } from '../../src/common/mounter.js';
import { dialRegistration } from '../../src/main/plugins/registration-client.js';
import { PluginWatcher } from '../../src/main/plugins/plugin-watcher.js';
import type { PersistentSpec } from '../../src/main/volumes/claim-resolver.js';
import { grpcCsiClient } from '../../src/main/volumes/csi/csi-client.js';
import { CSI_PLUGIN_TYPE, CsiDriverRegistry } from '../../src/main/volumes/csi/csi-drivers.js';
import { csiPlugin, stagingPath } from '../../src/main/volumes/csi-plugin.js';
import type { NodeInfoManager } from '../../src/main/volumes/csi/node-info.js';
import type { VolumeHost } from '../../src/main/volumes/volume-plugin.js';
import { startCsiTestPlugin, type CsiTestPlugin } from '../helpers/csi-test-plugin.js';
import { pollUntil } from '../helpers/poll.js';

const DRIVER = 'csi.test.kubelet-ts.io';

describe.runIf(process.getuid?.() === 0)('CSI node plugin registration and volumes (root)', () => {
  let dir: string;
  let plugin: CsiTestPlugin;
  let watcher: PluginWatcher;
  const installed: string[] = [];
  const mounter = new LinuxMounter();
  const nodeInfo: NodeInfoManager = {
    installDriver: (name, nodeId, max, topology) => {
      installed.push(`install ${name} ${nodeId} ${max} ${JSON.stringify(topology)}`);
      return Promise.resolve();
    },
    uninstallDriver: (name) => {
      installed.push(`uninstall ${name}`);
      return Promise.resolve();
    },
  };
  const drivers = new CsiDriverRegistry({ clients: (e) => grpcCsiClient(e, 10_000), nodeInfo, logger: silentLogger() });
  const csi = csiPlugin({
    nodeName: 'node-a',
    client: (name) => drivers.client(name),
    csiDriver: () => Promise.resolve({ spec: { attachRequired: false } }),
    volumeAttachment: () => Promise.resolve(undefined),
  });
  const host = (): VolumeHost => ({
    rootDir: join(dir, 'root'),
    mounter,
    clock: realClock,
    logger: silentLogger(),
    nodeAllocatable: { cpu: '1', memory: '1Gi' },
  });
  const pod = (uid: string): Pod => ({ metadata: { uid, name: `p-${uid}`, namespace: 'ns' }, spec: { containers: [] } });
  const spec = (readOnly = false): PersistentSpec => ({
    pv: {
      metadata: { name: 'pv-1' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        mountOptions: ['noatime'],
        csi: { driver: DRIVER, volumeHandle: 'vol-1', volumeAttributes: { a: 'b' } },
      },
    },
    readOnly,
    claim: 'ns/c',
  });
  const vol = { name: 'data', persistentVolumeClaim: { claimName: 'c' } };
  const mounted = (path: string) =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === path);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-csi-'));
    plugin = await startCsiTestPlugin({
      registryDir: join(dir, 'root/plugins_registry'),
      csiSocket: join(dir, 'csi.sock'),
      driver: DRIVER,
      nodeId: 'node-a-id',
      dataDir: join(dir, 'data'),
      log: join(dir, 'calls.jsonl'),
    });
    watcher = new PluginWatcher({
      dir: join(dir, 'root/plugins_registry'),
      handlers: { [CSI_PLUGIN_TYPE]: drivers },
      dial: dialRegistration,
      clock: realClock,
      logger: silentLogger(),
    });
    await watcher.start();
  }, 60_000);

  afterAll(async () => {
    await watcher?.stop();
    await plugin?.stop();
    for (const m of (await mounter.list()).filter((x) => x.mountPoint.startsWith(`${dir}/`)).reverse()) await mounter.unmount(m.mountPoint);
    await rm(dir, { recursive: true, force: true });
  });

  it('registers the driver: GetInfo, NodeGetInfo into the node info, NotifyRegistrationStatus(true)', async () => {
    await pollUntil('the driver registered', () => drivers.names().includes(DRIVER), { timeoutMs: 20_000 });
    await pollUntil('the registration notified', () => plugin.calls().find((c) => c.method === 'NotifyRegistrationStatus'), {
      timeoutMs: 10_000,
    });
    expect(installed).toEqual([`install ${DRIVER} node-a-id 0 {}`]);
    const methods = plugin.calls().map((c) => c.method);
    expect(methods).toEqual(['GetInfo', 'NodeGetInfo', 'NotifyRegistrationStatus']);
    expect(plugin.calls()[2]).toMatchObject({ pluginRegistered: true, error: '' });
  });

  it('stages once, publishes per pod, unpublishes per pod and unstages after the last one', async () => {
    const staging = stagingPath(join(dir, 'root'), 'pv-1');
    const a = await csi.setUp(pod('ua'), vol, host(), spec());
    const b = await csi.setUp(pod('ub'), vol, host(), spec(true));
    expect(a.path).toBe(join(dir, 'root/pods/ua/volumes/kubernetes.io~csi/pv-1/mount'));
    expect(b).toEqual({ path: join(dir, 'root/pods/ub/volumes/kubernetes.io~csi/pv-1/mount'), readOnly: true });
    expect(mounted(staging) && mounted(a.path) && mounted(b.path)).toBe(true);
    await writeFile(join(a.path, 'f'), 'shared');
    expect(await readFile(join(b.path, 'f'), 'utf8')).toBe('shared');
    await expect(writeFile(join(b.path, 'g'), 'x')).rejects.toThrow(/EROFS/);
    expect(JSON.parse(await readFile(join(dir, 'root/pods/ua/volumes/kubernetes.io~csi/pv-1/vol_data.json'), 'utf8'))).toEqual({
      specVolID: 'pv-1',
      volumeHandle: 'vol-1',
      driverName: DRIVER,
      nodeName: 'node-a',
      attachmentID: expect.stringMatching(/^csi-[0-9a-f]{64}$/) as string,
      volumeLifecycleMode: 'Persistent',
    });
    // Idempotent: set up again, nothing is called but the capability check.
    const before = plugin.calls().length;
    await csi.setUp(pod('ua'), vol, host(), spec());
    expect(
      plugin
        .calls()
        .slice(before)
        .map((c) => c.method),
    ).toEqual(['NodeGetCapabilities']);

    await csi.tearDown('ua', 'pv-1', host());
    expect(mounted(a.path)).toBe(false);
    expect(existsSync(join(dir, 'root/pods/ua/volumes/kubernetes.io~csi/pv-1'))).toBe(false);
    expect(mounted(staging)).toBe(true);
    await csi.tearDown('ub', 'pv-1', host());
    expect(mounted(staging)).toBe(false);
    expect(existsSync(join(dir, 'root/plugins/kubernetes.io/csi/pv/pv-1'))).toBe(false);
    expect(await readFile(join(dir, 'data/vol-1/f'), 'utf8')).toBe('shared');

    const calls = plugin.calls().filter((c) => /^Node(Stage|Unstage|Publish|Unpublish)Volume$/.test(c.method));
    expect(
      calls.map((c) =>
        `${c.method} ${(c.stagingTargetPath as string | undefined) ?? ''} ${(c.targetPath as string | undefined) ?? ''}`.trim(),
      ),
    ).toEqual([
      `NodeStageVolume ${staging}`,
      `NodePublishVolume ${staging} ${a.path}`,
      `NodePublishVolume ${staging} ${b.path}`,
      `NodeUnpublishVolume  ${a.path}`,
      `NodeUnpublishVolume  ${b.path}`,
      `NodeUnstageVolume ${staging}`,
    ]);
    expect(calls[1]).toMatchObject({
      volumeId: 'vol-1',
      readonly: false,
      volumeContext: { a: 'b' },
      volumeCapability: { mount: { fsType: '', mountFlags: ['noatime'] }, accessMode: { mode: 1 } },
    });
    expect(calls[2]).toMatchObject({ readonly: true });
  });

  it('a PV of a driver that is not registered fails with upstream message', async () => {
    const other = spec();
    other.pv.spec!.csi!.driver = 'missing.example.com';
    await expect(csi.setUp(pod('uc'), vol, host(), other)).rejects.toThrow(
      'kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name missing.example.com not found in the list of registered CSI drivers',
    );
  });

  it('a driver that needs attach: waits for an attached VolumeAttachment, whose metadata is the publish context', async () => {
    const va: { current?: { status?: { attached?: boolean; attachmentMetadata?: Record<string, string> } } } = {};
    const names: string[] = [];
    const attaching = csiPlugin({
      nodeName: 'node-a',
      client: (name) => drivers.client(name),
      csiDriver: () => Promise.resolve(undefined), // no CSIDriver object: attach required, as upstream
      volumeAttachment: (name) => (names.push(name), Promise.resolve(va.current)),
    });
    await expect(attaching.setUp(pod('ud'), vol, host(), spec())).rejects.toThrow(
      /^kubernetes.io\/csi: volume vol-1 of driver csi.test.kubelet-ts.io needs an attach .*: VolumeAttachment csi-[0-9a-f]{64} not found$/,
    );
    expect(await attaching.attachableName!(spec())).toBe(`kubernetes.io/csi/${DRIVER}^vol-1`);
    va.current = { status: { attached: true, attachmentMetadata: { device: '/dev/fake' } } };
    const before = plugin.calls().length;
    const { path } = await attaching.setUp(pod('ud'), vol, host(), spec());
    expect(names.at(-1)).toMatch(/^csi-[0-9a-f]{64}$/);
    const calls = plugin.calls().slice(before);
    expect(calls.find((c) => c.method === 'NodeStageVolume')).toMatchObject({ publishContext: { device: '/dev/fake' } });
    expect(calls.find((c) => c.method === 'NodePublishVolume')).toMatchObject({
      publishContext: { device: '/dev/fake' },
      targetPath: path,
    });
    await attaching.tearDown('ud', 'pv-1', host());
    expect(mounted(path)).toBe(false);
    expect(plugin.calls().at(-1)?.method).toBe('NodeUnstageVolume');
  });

  it('deregisters the driver when its registration socket goes', async () => {
    await plugin.stop();
    await pollUntil('the driver deregistered', () => !drivers.names().includes(DRIVER), { timeoutMs: 20_000 });
    expect(installed.at(-1)).toBe(`uninstall ${DRIVER}`);
  });
});
