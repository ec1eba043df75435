/**
 * CSI PersistentVolumes (upstream pkg/volume/csi: csi_attacher.go MountDevice
 * and UnmountDevice, csi_mounter.go SetUp and TearDown) through the Node
 * service of a driver registered with the plugin watcher.
 *
 * Paths, as upstream:
 *  - staging: <root>/plugins/kubernetes.io/csi/pv/<pv>/globalmount, with
 *    vol_data.json (driverName, volumeHandle) beside it;
 *  - target: <root>/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount, with
 *    vol_data.json (specVolID, volumeHandle, driverName, nodeName,
 *    attachmentID, volumeLifecycleMode) beside it.
 *
 * Contracts:
 *  - setUp stages the volume (NodeStageVolume, when the driver reports
 *    STAGE_UNSTAGE_VOLUME) unless it is staged already, then publishes it
 *    (NodePublishVolume) unless the target is a mount point already.
 *  - tearDown knows only the pod UID and the PV name: it reads vol_data.json,
 *    unpublishes, removes the target's directory, and, when no other pod
 *    directory on the node holds the PV, unstages it and removes the staging
 *    directory.
 *  - Operations on one PV run one at a time (stage/unstage of pods sharing it
 *    never interleave).
 *  - A driver that requires attach (its CSIDriver object missing, or
 *    attachRequired not false) needs its VolumeAttachment attached; the
 *    publish context comes from it. Secrets references are refused with a
 *    clear message (not built).
 *  - An unregistered driver fails with upstream's message, retried with
 *    the volume manager's backoff.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PersistentVolume } from '../../api/core-v1.js';
import type { Pod } from '../../api/pod.js';
import { VolumeError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { makeDirectoryAsync } from '../../common/make-dir.js';
import { isMountPoint, type Mounter } from '../../common/mounter.js';
import { escapePluginName, podDir, podsDir, volumeDir } from '../../pod/pod-dirs.js';
import type { PersistentSpec } from './claim-resolver.js';
import { fsGroupOf, setVolumeOwnership } from './volume-ownership.js';
import type { MountedVolume, VolumeHost, VolumePlugin } from './volume-plugin.js';
import { csiAccessMode, type CsiNodeClient } from './csi/csi-client.js';

export const CSI_PLUGIN = 'kubernetes.io/csi';
const VOL_DATA = 'vol_data.json';

/** The storage.k8s.io/v1 CSIDriver fields the node reads. */
export interface CSIDriverObject {
  spec?: { attachRequired?: boolean; podInfoOnMount?: boolean; fsGroupPolicy?: string };
}

/** The storage.k8s.io/v1 VolumeAttachment fields the node reads. */
export interface VolumeAttachmentObject {
  status?: { attached?: boolean; attachmentMetadata?: Record<string, string>; attachError?: { message?: string } };
}

/** What the plugin needs besides the VolumeHost (the seam: fakes in unit tests). */
export interface CsiPluginDeps {
  nodeName: string;
  /** A client for a registered driver; throws "driver name X not found in the list of registered CSI drivers". */
  client(driver: string): CsiNodeClient;
  /** The CSIDriver object, or undefined when there is none. */
  csiDriver(name: string): Promise<CSIDriverObject | undefined>;
  /** The VolumeAttachment, or undefined when there is none. */
  volumeAttachment(name: string): Promise<VolumeAttachmentObject | undefined>;
}

/** upstream getAttachmentName: csi-<sha256(volumeHandle + driver + node)>. */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

/** upstream makeDeviceMountPath. */
export function stagingPath(rootDir: string, pvName: string): string {
  return join(rootDir, 'plugins', CSI_PLUGIN, 'pv', pvName, 'globalmount');
}

/** upstream supportsFSGroup: whether the pod's fsGroup is applied to the published volume. */
export function appliesFsGroup(pv: PersistentVolume, readOnly: boolean, policy: string | undefined, hasFsGroup: boolean): boolean {
  if (!hasFsGroup || readOnly || policy === 'None') return false;
  if (policy === 'File') return true;
  if (!pv.spec?.csi?.fsType) return false;
  return (pv.spec.accessModes ?? []).includes('ReadWriteOnce');
}

/** `failed`: upstream's operation and the PV name, for the event (volume-manager.ts). */
const csiError = (what: string, err: unknown, failed?: { operation: string; volume: string }) =>
  new VolumeError(`kubernetes.io/csi: ${what}: ${errorMessage(err)}`, { cause: err, failed });
const mountDevice = (volume: string) => ({ operation: 'MountVolume.MountDevice', volume });

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

async function readVolData(dir: string): Promise<Record<string, string> | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, VOL_DATA), 'utf8')) as Record<string, string>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** upstream removeMountDir: the mount point (never while mounted), vol_data.json, then the volume directory. */
async function removeMountDir(mounter: Mounter, mountPath: string): Promise<void> {
  if (isMountPoint(await mounter.list(), mountPath)) throw new VolumeError(`${mountPath} is still mounted`);
  await rmdir(mountPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await rm(join(dirname(mountPath), VOL_DATA), { force: true });
  await rmdir(dirname(mountPath)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

export function csiPlugin(deps: CsiPluginDeps): VolumePlugin {
  const locks = new Map<string, Promise<unknown>>();
  const staged = new Set<string>();
  const serial = <T>(pv: string, fn: () => Promise<T>): Promise<T> => {
    const run = (locks.get(pv) ?? Promise.resolve()).then(fn, fn);
    const tail: Promise<void> = run.then(forget, forget);
    function forget(): void {
      if (locks.get(pv) === tail) locks.delete(pv);
    }
    locks.set(pv, tail);
    return run;
  };
  const clientFor = (driver: string, what: string, failed?: { operation: string; volume: string }) => {
    try {
      return deps.client(driver);
    } catch (err) {
      throw csiError(what, err, failed);
    }
  };

  /** The publish context of an attached volume (upstream getPublishContext); {} when the driver needs no attach. */
  async function publishContext(
    obj: CSIDriverObject | undefined,
    driver: string,
    volumeHandle: string,
    pvName: string,
  ): Promise<Record<string, string>> {
    if (obj?.spec?.attachRequired === false) return {};
    const name = attachmentName(volumeHandle, driver, deps.nodeName);
    const va = await deps.volumeAttachment(name).catch((err: unknown) => {
      throw csiError(`volume ${volumeHandle} of driver ${driver} needs an attach: VolumeAttachment ${name}`, err, {
        operation: 'MountVolume.WaitForAttach',
        volume: pvName,
      });
    });
    if (!va?.status?.attached) {
      const why = va?.status?.attachError?.message ?? (va ? 'not attached yet' : 'not found');
      throw new VolumeError(
        `kubernetes.io/csi: volume ${volumeHandle} of driver ${driver} needs an attach (its CSIDriver does not say attachRequired: false): VolumeAttachment ${name} ${why}`,
        { failed: { operation: 'MountVolume.WaitForAttach', volume: pvName } },
      );
    }
    return va.status.attachmentMetadata ?? {};
  }

  /** upstream MountDevice. */
  async function stage(client: CsiNodeClient, host: VolumeHost, persistent: PersistentSpec, context: Record<string, string>) {
    const pv = persistent.pv;
    const src = pv.spec!.csi!;
    const pvName = pv.metadata?.name ?? '';
    const path = stagingPath(host.rootDir, pvName);
    const useStage = await client.nodeSupportsStageUnstage().catch((err: unknown) => {
      throw csiError('attacher.MountDevice failed to check STAGE_UNSTAGE_VOLUME', err, mountDevice(pvName));
    });
    if (staged.has(pvName) || (useStage && isMountPoint(await host.mounter.list(), path))) {
      staged.add(pvName);
      return useStage ? path : '';
    }
    await makeDirectoryAsync(path, 'the CSI staging directory', 0o750);
    await writeFile(join(dirname(path), VOL_DATA), JSON.stringify({ driverName: src.driver, volumeHandle: src.volumeHandle }));
    if (useStage) {
      await client
        .nodeStageVolume({
          volumeId: src.volumeHandle,
          publishContext: context,
          stagingTargetPath: path,
          volumeCapability: capability(pv),
          secrets: {},
          volumeContext: src.volumeAttributes ?? {},
        })
        .catch((err: unknown) => {
          throw csiError('attacher.MountDevice failed', err, mountDevice(pvName));
        });
    }
    staged.add(pvName);
    return useStage ? path : '';
  }

  /** upstream UnmountDevice, when no pod on the node holds the PV any more. */
  async function unstage(host: VolumeHost, pvName: string): Promise<void> {
    const path = stagingPath(host.rootDir, pvName);
    const data = await readVolData(dirname(path));
    if (data) {
      const client = clientFor(data.driverName ?? '', 'attacher.UnmountDevice failed to create newCsiDriverClient');
      try {
        if (await client.nodeSupportsStageUnstage()) await client.nodeUnstageVolume(data.volumeHandle ?? '', path);
      } catch (err) {
        throw csiError('attacher.UnmountDevice failed', err);
      } finally {
        client.close();
      }
    }
    staged.delete(pvName);
    await removeMountDir(host.mounter, path);
  }

  return {
    name: CSI_PLUGIN,
    requiresRemount: false,
    dirNamedByPV: true,
    canSupport: () => false,
    canSupportPersistent: (pv) => pv.spec?.csi !== undefined,
    /** upstream CanAttach (a driver needs attach unless its CSIDriver says attachRequired: false), name GetUniqueVolumeName. */
    async attachableName(persistent) {
      const src = persistent.pv.spec?.csi;
      if (!src) return undefined;
      const obj = await deps.csiDriver(src.driver);
      return obj?.spec?.attachRequired === false ? undefined : `${CSI_PLUGIN}/${src.driver}^${src.volumeHandle}`;
    },
    async setUp(pod, _v, host, persistent): Promise<MountedVolume> {
      if (!persistent?.pv.spec?.csi) throw new VolumeError('a CSI volume must come from a PersistentVolume with spec.csi');
      const pv = persistent.pv;
      const src = pv.spec!.csi!;
      const pvName = pv.metadata?.name ?? '';
      const readOnly = persistent.readOnly || src.readOnly === true;
      for (const ref of ['nodeStageSecretRef', 'nodePublishSecretRef'] as const) {
        if (src[ref])
          throw new VolumeError(`kubernetes.io/csi: PersistentVolume "${pvName}" sets ${ref}, which kubelet-ts does not support`);
      }
      const target = join(volumeDir(podDir(host.rootDir, pod.metadata.uid ?? ''), CSI_PLUGIN, pvName), 'mount');
      // As upstream: WaitForAttach (an attached VolumeAttachment, when the driver needs one), then MountDevice, then SetUp.
      const driver = await deps.csiDriver(src.driver);
      const context = await publishContext(driver, src.driver, src.volumeHandle, pvName);
      const client = clientFor(src.driver, 'attacher.MountDevice failed to create newCsiDriverClient', mountDevice(pvName));
      try {
        const published = await serial(pvName, async () => {
          const staging = await stage(client, host, persistent, context);
          if (isMountPoint(await host.mounter.list(), target)) return false;
          await makeDirectoryAsync(dirname(target), 'the CSI volume directory', 0o750);
          await writeFile(join(dirname(target), VOL_DATA), JSON.stringify(volData(pv, deps.nodeName)));
          try {
            await client.nodePublishVolume({
              volumeId: src.volumeHandle,
              publishContext: context,
              stagingTargetPath: staging,
              targetPath: target,
              volumeCapability: capability(pv),
              readonly: readOnly,
              secrets: {},
              volumeContext: { ...(src.volumeAttributes ?? {}), ...(driver?.spec?.podInfoOnMount ? podInfo(pod) : {}) },
            });
          } catch (err) {
            await removeMountDir(host.mounter, target).catch(() => undefined);
            throw csiError('mounter.SetUpAt failed', err, { operation: 'MountVolume.SetUp', volume: pvName });
          }
          return true;
        });
        const policy = driver?.spec?.fsGroupPolicy ?? 'ReadWriteOnceWithFSType';
        const { fsGroup } = fsGroupOf(pod);
        if (published && appliesFsGroup(pv, readOnly, policy, fsGroup !== undefined && fsGroup !== null)) {
          await setVolumeOwnership(target, pod, false);
        }
      } finally {
        client.close();
      }
      return { path: target, readOnly };
    },
    async tearDown(uid, pvName, host) {
      const dir = volumeDir(podDir(host.rootDir, uid), CSI_PLUGIN, pvName);
      const target = join(dir, 'mount');
      await serial(pvName, async () => {
        const data = await readVolData(dir);
        if (data && isMountPoint(await host.mounter.list(), target)) {
          const client = clientFor(data.driverName ?? '', 'mounter.TearDownAt failed to get CSI client');
          try {
            await client.nodeUnpublishVolume(data.volumeHandle ?? '', target);
          } catch (err) {
            throw csiError('mounter.TearDownAt failed', err);
          } finally {
            client.close();
          }
        }
        if (await exists(dir)) await removeMountDir(host.mounter, target);
        if (!(await heldByOtherPod(host.rootDir, uid, pvName))) await unstage(host, pvName);
      });
    },
  };
}

function capability(pv: PersistentVolume) {
  return {
    mount: { fsType: pv.spec?.csi?.fsType ?? '', mountFlags: pv.spec?.mountOptions ?? [] },
    accessMode: { mode: csiAccessMode(pv.spec?.accessModes?.[0]) },
  };
}

function volData(pv: PersistentVolume, nodeName: string): Record<string, string> {
  const src = pv.spec!.csi!;
  return {
    specVolID: pv.metadata?.name ?? '',
    volumeHandle: src.volumeHandle,
    driverName: src.driver,
    nodeName,
    attachmentID: attachmentName(src.volumeHandle, src.driver, nodeName),
    volumeLifecycleMode: 'Persistent',
  };
}

/** upstream podAttributes (CSIDriver podInfoOnMount). */
function podInfo(pod: Pod): Record<string, string> {
  return {
    'csi.storage.k8s.io/pod.name': pod.metadata.name ?? '',
    'csi.storage.k8s.io/pod.namespace': pod.metadata.namespace ?? '',
    'csi.storage.k8s.io/pod.uid': pod.metadata.uid ?? '',
    'csi.storage.k8s.io/serviceAccount.name': pod.spec.serviceAccountName ?? '',
    'csi.storage.k8s.io/ephemeral': 'false',
  };
}

/** Another pod's directory holds the PV (its device must stay staged). */
async function heldByOtherPod(rootDir: string, uid: string, pvName: string): Promise<boolean> {
  const uids = await readdir(podsDir(rootDir)).catch(() => [] as string[]);
  for (const other of uids) {
    if (other === uid) continue;
    if (await exists(join(podDir(rootDir, other), 'volumes', escapePluginName(CSI_PLUGIN), pvName))) return true;
  }
  return false;
}
