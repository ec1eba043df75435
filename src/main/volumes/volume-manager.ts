/**
 * The volume manager (upstream pkg/kubelet/volumemanager) on the main thread:
 * the desired state (the volumes of the pods being synced), the actual state
 * (what is set up on this node) and the reconciler that moves one toward the
 * other with the plugins' setUp/tearDown, asynchronously.
 *
 * Contracts:
 *  - waitForAttachAndMount (SyncPod, before the sandbox) adds the pod's
 *    mounted volumes to the desired state, asks for a remount of the volumes
 *    whose plugin requires one (contents follow their sources), and resolves
 *    with the volume map once each is set up. Problems retrying cannot fix
 *    (unsupported source, no apiserver) and claims that do not resolve to a
 *    bound PV (desired-state.ts) reject at once; otherwise it rejects after
 *    2 min 3 s. Both messages start as upstream's: "unmounted volumes=[..],
 *    unattached volumes=[], failed to process volumes=[..]: ". A remount
 *    does not delay the sync: the volume stays mounted meanwhile.
 *  - waitForUnmount (SyncTerminatedPod) removes the pod from the desired
 *    state and resolves once every volume is torn down.
 *  - At most one operation per volume at a time; at most
 *    `maxConcurrentOperations` at once. A failed operation is retried with
 *    exponential backoff (500 ms doubling to 2 min 2 s, upstream's), each
 *    failed setUp recorded as a FailedMount event on the pod.
 *  - Volumes found on disk at start (reconstruct) belong to no pod until one
 *    claims them: they are torn down only when housekeeping says their pod is
 *    gone (releaseOrphans), never while sources may still deliver it.
 *  - A change of a configMap or secret a mounted volume reads is applied at
 *    once (ObjectSource.onChange), not only at the pod's next sync as upstream;
 *    a volume waiting for a missing object is retried as soon as it appears.
 *  - Every operation is observed in storage_operation_duration_seconds.
 */
import { readdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { VolumeError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { v } from '../../common/logger.js';
import { podDir, podPluginsDir, podsDir, podVolumesDir, unescapePluginName } from '../../pod/pod-dirs.js';
import { Semaphore } from '../../common/semaphore.js';
import { cleanSubPaths } from '../../pod/subpath.js';
import { makeRShared } from '../../common/mounter.js';
import { podReference, type EventRecorder } from '../events/event-recorder.js';
import { attachableNames, populate, resolveClaims, type ClaimResults } from './desired-state.js';
import { mountedVolumeNames } from './pod-volumes.js';
import type { StorageOperation, VolumeMetrics } from './volume-metrics.js';
import type { MountedVolume, ObjectRef, VolumeHost, VolumePlugin } from './volume-plugin.js';
import {
  backoffMs,
  ensureDir,
  needsPropagation,
  newVolume,
  pvKey,
  subPathVolumes,
  type PodEntry,
  type VolumeEntry,
  type Waiter,
} from './volume-state.js';

/** upstream podAttachAndMountTimeout. */
export const ATTACH_MOUNT_TIMEOUT_MS = 123_000;

/** A pod's set-up volumes by pod.spec.volumes[].name (upstream VolumeMap). */
export type VolumeMap = Record<string, MountedVolume>;

/** What pod syncs need of the volume manager (the seam PoolSyncer uses; test/fakes/fake-volume-manager.ts). */
export interface PodVolumeManager {
  /** pods/<uid> under --root-dir. */
  podDir(uid: string): string;
  waitForAttachAndMount(pod: Pod, signal?: AbortSignal): Promise<VolumeMap>;
  waitForUnmount(uid: string, signal?: AbortSignal): Promise<void>;
}

export interface VolumeManagerOptions {
  host: VolumeHost;
  plugins: readonly VolumePlugin[];
  recorder: EventRecorder;
  metrics?: VolumeMetrics;
  clock: Clock;
  logger: Logger;
  maxConcurrentOperations?: number;
}

const message = (err: unknown) => errorMessage(err);

export class VolumeManager implements PodVolumeManager {
  private readonly pods = new Map<string, PodEntry>();
  private readonly dirty = new Set<string>();
  private scheduled = false;
  private readonly ops: Semaphore;
  private readonly inFlight = new Set<Promise<void>>();
  /** Armed retry timers (cancelled by close). */
  private readonly timers = new Set<() => void>();
  private closed = false;
  private rootShared: Promise<void> | undefined;

  constructor(private readonly options: Readonly<VolumeManagerOptions>) {
    this.ops = new Semaphore(options.maxConcurrentOperations ?? 8);
    options.host.objects?.onChange((ref) => this.objectChanged(ref));
  }

  /**
   * A configMap or secret changed: the volumes reading it are set up again
   * now (a mounted one is remounted, one failing to mount is retried without
   * waiting for its backoff), rather than at the pod's next sync as upstream.
   */
  private objectChanged(ref: ObjectRef): void {
    for (const entry of this.pods.values()) {
      if (!entry.desired || !entry.pod) continue;
      const reads = (name: string) => {
        const vol = (entry.pod!.spec.volumes ?? []).find((x) => x.name === name);
        const e = entry.volumes.get(name);
        const refs = vol && e ? (e.plugin.references?.(entry.pod!, vol) ?? []) : [];
        return refs.some((r) => r.kind === ref.kind && r.namespace === ref.namespace && r.name === ref.name);
      };
      let touched = false;
      for (const e of entry.volumes.values()) {
        if (!e.desired || !reads(e.name)) continue;
        if (e.mounted) e.remountRequired = true;
        e.retryAt = 0;
        touched = true;
      }
      if (touched) this.kick(entry.uid);
    }
  }

  /**
   * upstream makes --root-dir rshared at start so that HostToContainer and
   * Bidirectional mounts of pod volumes propagate; this does it the first
   * time a pod asks for propagation (a bind of the root dir onto itself, left
   * in place, as upstream leaves it).
   */
  private ensureRootShared(): Promise<void> {
    this.rootShared ??= makeRShared(this.options.host.mounter, this.options.host.rootDir).then(
      () =>
        this.options.logger.info({ rootDir: this.options.host.rootDir }, 'Made the root directory an rshared mount for mount propagation'),
      (err: unknown) => {
        this.rootShared = undefined;
        throw new VolumeError(`cannot make the root directory ${this.options.host.rootDir} rshared for mount propagation: ${message(err)}`);
      },
    );
    return this.rootShared;
  }

  podDir(uid: string): string {
    return podDir(this.options.host.rootDir, uid);
  }

  /**
   * Creates the pod's directories (upstream makePodDataDirs), sets up the
   * volumes its containers mount and resolves with them. See the module contract.
   */
  async waitForAttachAndMount(pod: Pod, signal?: AbortSignal): Promise<VolumeMap> {
    const uid = pod.metadata.uid ?? '';
    const pd = podDir(this.options.host.rootDir, uid);
    const made = this.pods.get(uid)?.dirsMade === true;
    ensureDir(podVolumesDir(pd), 0o750, made, 'the pod volumes directory');
    ensureDir(podPluginsDir(pd), 0o750, made, 'the pod plugins directory');
    if (needsPropagation(pod)) await this.ensureRootShared();
    const claims = await resolveClaims(pod, this.options.host);
    const attachable = await attachableNames(pod, this.options.plugins, claims);
    const entry = this.addPod(pod, claims);
    for (const e of entry.volumes.values()) if (typeof claims.get(e.name) === 'object') e.inUseName = attachable.get(e.name);
    entry.dirsMade = true;
    const inSpec = new Set((pod.spec.volumes ?? []).map((x) => x.name));
    const expected = [...mountedVolumeNames(pod)].filter((n) => inSpec.has(n)).sort();
    if (expected.length === 0 && entry.errors.length === 0) return {};
    v(this.options.logger, 3).info({ pod: podName(pod) }, 'Waiting for volumes to attach and mount for pod');
    // upstream's message: the volumes not mounted yet, and those not in the desired state (a claim not bound, say).
    await this.wait(entry, 'mount', signal, () => {
      const pending = expected.filter((n) => !entry.volumes.get(n)?.mounted);
      const unprocessed = expected.filter((n) => !entry.volumes.get(n)?.desired);
      return `unmounted volumes=[${pending.join(' ')}], unattached volumes=[], failed to process volumes=[${unprocessed.join(' ')}]`;
    });
    const map: VolumeMap = {};
    for (const name of expected) {
      const mounted = entry.volumes.get(name)?.mounted;
      if (!mounted) throw new VolumeError(`volume ${JSON.stringify(name)} of pod ${podName(pod)} is not set up`);
      map[name] = mounted;
    }
    return map;
  }

  /** Removes the pod from the desired state and resolves once its volumes are torn down. */
  async waitForUnmount(uid: string, signal?: AbortSignal): Promise<void> {
    const entry = this.pods.get(uid);
    if (!entry) return;
    entry.desired = false;
    entry.released = true;
    for (const e of entry.volumes.values()) e.desired = false;
    entry.errors = [];
    this.kick(uid);
    if (entry.volumes.size === 0) return this.forget(entry);
    await this.wait(entry, 'unmount', signal, () => `mounted volumes=[${[...entry.volumes.keys()].sort().join(' ')}]`);
  }

  /** True while the pod has volumes set up or left on disk (upstream podVolumesExist). */
  hasVolumes(uid: string): boolean {
    const entry = this.pods.get(uid);
    return !!entry && [...entry.volumes.values()].some((e) => e.mounted || e.onDisk || e.inFlight);
  }

  /**
   * The unique names of the attachable volumes pods want or have mounted,
   * sorted (upstream GetVolumesInUse, reported in the Node's status.volumesInUse).
   */
  volumesInUse(): string[] {
    const names = new Set<string>();
    for (const entry of this.pods.values()) {
      for (const e of entry.volumes.values()) if (e.inUseName && (e.desired || e.mounted)) names.add(e.inUseName);
    }
    return [...names].sort();
  }

  /** UIDs the manager holds state for. */
  uids(): string[] {
    return [...this.pods.keys()];
  }

  /**
   * Finds volumes an earlier process left under <root>/pods (upstream
   * reconstruction), so they are reused by their pod or torn down if it is
   * gone. Call once at start, before pods sync.
   */
  async reconstruct(): Promise<number> {
    let uids: string[];
    try {
      uids = await readdir(podsDir(this.options.host.rootDir));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let found = 0;
    for (const uid of uids) {
      const volumesDir = podVolumesDir(podDir(this.options.host.rootDir, uid));
      const pluginDirs = await readdir(volumesDir).catch(() => [] as string[]);
      for (const pluginDir of pluginDirs) {
        const plugin = this.options.plugins.find((p) => p.name === unescapePluginName(pluginDir));
        const names = await readdir(`${volumesDir}/${pluginDir}`).catch(() => [] as string[]);
        if (!plugin) {
          if (names.length > 0)
            this.options.logger.warn(
              { podUID: uid, plugin: pluginDir, volumes: names },
              'Volumes of an unknown plugin on disk; leaving them',
            );
          continue;
        }
        for (const name of names) {
          const entry = this.entry(uid);
          entry.released = false;
          // A PV-named directory waits under pvKey until the pod's claim claims it (desired-state.ts).
          const e = newVolume(plugin.dirNamedByPV ? pvKey(name) : name, plugin, { desired: false, onDisk: true });
          if (plugin.dirNamedByPV) e.dirName = name;
          entry.volumes.set(e.name, e);
          found++;
        }
      }
    }
    if (found > 0) this.options.logger.info({ volumes: found }, 'Reconstructed volumes left on disk by an earlier run');
    return found;
  }

  /**
   * Housekeeping (sources ready): tears down the volumes of pods that are no
   * longer active (not desired, not terminating, no running containers) and
   * that no sync claimed.
   */
  releaseOrphans(isActive: (uid: string) => boolean): void {
    for (const entry of this.pods.values()) {
      if (entry.desired || entry.released || isActive(entry.uid)) continue;
      entry.released = true;
      this.options.logger.info({ podUID: entry.uid, volumes: [...entry.volumes.keys()] }, 'Tearing down volumes of a pod that is gone');
      this.kick(entry.uid);
    }
  }

  /** Agent shutdown: starts no more operations, cancels retries and fails every waiter, so no sync stays blocked on a volume. */
  close(): void {
    this.closed = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    for (const entry of this.pods.values()) {
      for (const w of [...entry.waiters]) w.reject(new VolumeError('the volume manager is stopping'));
    }
  }

  /** Resolves when no operation is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.scheduled) {
      await Promise.all([...this.inFlight]);
      await Promise.resolve();
    }
  }

  // --- desired state ---------------------------------------------------------

  private entry(uid: string): PodEntry {
    let e = this.pods.get(uid);
    if (!e) {
      e = { uid, desired: false, released: true, volumes: new Map(), errors: [], refs: [], waiters: new Set() };
      this.pods.set(uid, e);
    }
    return e;
  }

  private addPod(pod: Pod, claims: ClaimResults): PodEntry {
    const uid = pod.metadata.uid ?? '';
    const entry = this.entry(uid);
    entry.pod = pod;
    entry.desired = true;
    entry.released = false;
    entry.errors = [];
    const refs = populate(entry, pod, this.options.plugins, this.options.host, claims);
    // Register before unregistering, so an object the pod keeps never loses its watch.
    for (const r of refs) this.options.host.objects?.register(r);
    for (const r of entry.refs) this.options.host.objects?.unregister(r);
    entry.refs = refs;
    this.kick(uid);
    return entry;
  }

  private forget(entry: PodEntry): void {
    if (entry.volumes.size > 0 || entry.desired) return;
    for (const r of entry.refs) this.options.host.objects?.unregister(r);
    entry.refs = [];
    this.options.host.tokens?.deletePodTokens(entry.uid);
    this.pods.delete(entry.uid);
  }

  // --- waiting ------------------------------------------------------------------

  /** `status`: upstream's description of what is still waited for, the start of a timeout's or an error's message. */
  private wait(entry: PodEntry, kind: Waiter['kind'], signal: AbortSignal | undefined, status: () => string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let cancelTimer = () => {};
      const onAbort = () => finish(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      const finish = (err?: Error) => {
        entry.waiters.delete(waiter);
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const waiter: Waiter = { kind, status, resolve: () => finish(), reject: finish };
      if (signal?.aborted) return onAbort();
      // Closed: nothing reconciles any more, so a wait (a pod terminating during shutdown) would only time out.
      if (this.closed) return finish(new VolumeError('the volume manager is stopping'));
      entry.waiters.add(waiter);
      cancelTimer = this.options.clock.setTimer(ATTACH_MOUNT_TIMEOUT_MS, () =>
        finish(new VolumeError(`${status()}: timed out waiting for the condition`)),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.notify(entry);
    });
  }

  private notify(entry: PodEntry): void {
    for (const w of [...entry.waiters]) {
      if (w.kind === 'mount') {
        if (entry.errors.length > 0) {
          const errs = entry.errors;
          entry.errors = [];
          w.reject(new VolumeError(`${w.status()}: ${errs.join('; ')}`));
        } else if ([...entry.volumes.values()].every((e) => !e.desired || e.mounted)) w.resolve();
      } else if (entry.volumes.size === 0) w.resolve();
    }
  }

  // --- reconciler -----------------------------------------------------------------

  private kick(uid: string): void {
    if (this.closed) return;
    this.dirty.add(uid);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      const uids = [...this.dirty];
      this.dirty.clear();
      for (const u of uids) this.reconcilePod(u);
    });
  }

  private reconcilePod(uid: string): void {
    const entry = this.pods.get(uid);
    if (!entry) return;
    const now = this.options.clock.now();
    for (const e of [...entry.volumes.values()]) {
      if (e.inFlight) continue;
      // A volume the pod no longer wants goes at once; the volumes of a pod that is not desired wait for its release.
      const tearDown = !e.desired && (!!e.mounted || e.onDisk) && (entry.desired || entry.released);
      const setUp = e.desired && (!e.mounted || e.remountRequired);
      if (!e.desired && !e.mounted && !e.onDisk) {
        entry.volumes.delete(e.name);
        continue;
      }
      if (!tearDown && !setUp) continue;
      if (now < e.retryAt) {
        if (!e.retryArmed) {
          e.retryArmed = true;
          const cancel = this.options.clock.setTimer(e.retryAt - now, () => {
            this.timers.delete(cancel);
            e.retryArmed = false;
            this.kick(uid);
          });
          this.timers.add(cancel);
        }
        continue;
      }
      this.start(entry, e, tearDown ? 'volume_unmount' : 'volume_mount');
    }
    this.notify(entry);
    if (!entry.desired && entry.volumes.size === 0) this.forget(entry);
  }

  private start(entry: PodEntry, e: VolumeEntry, op: StorageOperation): void {
    e.inFlight = true;
    const remount = op === 'volume_mount' && !!e.mounted;
    const run = this.ops
      .run(async () => {
        const started = this.options.clock.now();
        let ok = false;
        try {
          if (op === 'volume_mount') await this.setUp(entry, e, remount);
          else await this.tearDown(entry, e);
          ok = true;
          e.failures = 0;
          e.retryAt = 0;
        } catch (err) {
          e.failures++;
          e.retryAt = this.options.clock.now() + backoffMs(e.failures);
          this.reportFailure(entry, e, op, err);
        } finally {
          this.options.metrics?.observe(e.plugin.name, op, ok, (this.options.clock.now() - started) / 1000);
        }
      })
      .finally(() => {
        e.inFlight = false;
        this.inFlight.delete(run);
        this.kick(entry.uid);
      });
    this.inFlight.add(run);
  }

  private async setUp(entry: PodEntry, e: VolumeEntry, remount: boolean): Promise<void> {
    const pod = entry.pod!;
    const spec = (pod.spec.volumes ?? []).find((x) => x.name === e.name);
    if (!spec) throw new VolumeError(`volume ${JSON.stringify(e.name)} is not in the pod spec`);
    e.remountRequired = false;
    const mounted = await e.plugin.setUp(pod, spec, this.options.host, e.persistent);
    e.mounted = e.persistent?.gid ? { ...mounted, gid: e.persistent.gid } : mounted;
    e.onDisk = false;
    v(this.options.logger, remount ? 4 : 1).info(
      { pod: podName(pod), podUID: entry.uid, volume: e.name, plugin: e.plugin.name },
      `MountVolume.SetUp succeeded for volume ${JSON.stringify(e.name)}`,
    );
  }

  private async tearDown(entry: PodEntry, e: VolumeEntry): Promise<void> {
    const pd = podDir(this.options.host.rootDir, entry.uid);
    for (const name of await subPathVolumes(pd, entry, e)) await cleanSubPaths(this.options.host.mounter, pd, name);
    await e.plugin.tearDown(entry.uid, e.dirName ?? e.name, this.options.host);
    e.mounted = undefined;
    e.onDisk = false;
    entry.volumes.delete(e.name);
    this.options.logger.info(
      { podUID: entry.uid, volume: e.name, plugin: e.plugin.name },
      `UnmountVolume.TearDown succeeded for volume ${JSON.stringify(e.name)}`,
    );
  }

  private reportFailure(entry: PodEntry, e: VolumeEntry, op: StorageOperation, err: unknown): void {
    const retryInMs = e.retryAt - this.options.clock.now();
    if (op === 'volume_mount') {
      const failed = err instanceof VolumeError ? err.failed : undefined;
      const msg = `${failed?.operation ?? 'MountVolume.SetUp'} failed for volume ${JSON.stringify(failed?.volume ?? e.name)} : ${message(err)}`;
      this.options.logger.error({ pod: entry.pod ? podName(entry.pod) : entry.uid, podUID: entry.uid, retryInMs }, msg);
      if (entry.pod) this.options.recorder.record(podReference(entry.pod), 'Warning', 'FailedMount', msg);
    } else {
      this.options.logger.error(
        { podUID: entry.uid, volume: e.name, retryInMs },
        `UnmountVolume.TearDown failed for volume ${JSON.stringify(e.name)}: ${message(err)}`,
      );
    }
  }
}

function podName(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}
