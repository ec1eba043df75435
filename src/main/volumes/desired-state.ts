/**
 * The desired state of one pod's volumes (upstream desired state of world
 * populator, processPodVolumes): the volumes its containers mount, each with
 * its plugin, and for persistentVolumeClaim volumes the PersistentVolume
 * bound to the claim.
 *
 * Contracts:
 *  - resolveClaims reads every claim the pod mounts from the apiserver
 *    (each call, as upstream reprocesses a pod on each sync); a claim that
 *    cannot be resolved yields upstream's message, which fails the pod's
 *    mount wait (the pod worker retries with backoff).
 *  - populate never tears down a volume only because its claim could not
 *    be resolved this time: a volume already set up stays desired (upstream
 *    keeps it in the desired state while the pod exists).
 *  - A PV-named volume found on disk after a restart (key pvKey(PV)) is
 *    claimed by the pod volume whose claim is bound to that PV, so it is
 *    reused rather than torn down and mounted again.
 */
import type { Pod } from '../../api/pod.js';
import { resolveClaim, type PersistentSpec } from './claim-resolver.js';
import { NEEDS_APISERVER } from './object-volume-plugins.js';
import { findPlugin, mountedVolumeNames } from './pod-volumes.js';
import type { ObjectRef, VolumeHost, VolumePlugin } from './volume-plugin.js';
import { newVolume, pvKey, type PodEntry, type VolumeEntry } from './volume-state.js';
import { errorMessage } from '../../common/error-message.js';

/** Per mounted persistentVolumeClaim volume: its PV, or the message saying why it has none. */
export type ClaimResults = Map<string, PersistentSpec | string>;

/** Resolves the claims of the persistentVolumeClaim volumes `pod` mounts (in parallel). */
export async function resolveClaims(pod: Pod, host: VolumeHost): Promise<ClaimResults> {
  const wanted = mountedVolumeNames(pod);
  const out: ClaimResults = new Map();
  await Promise.all(
    (pod.spec.volumes ?? [])
      .filter((v) => v.persistentVolumeClaim && wanted.has(v.name))
      .map(async (v) => {
        if (!host.claims) {
          out.set(v.name, `volume ${JSON.stringify(v.name)}: persistentVolumeClaim volumes need the apiserver: ${NEEDS_APISERVER}`);
          return;
        }
        try {
          out.set(v.name, await resolveClaim(host.claims, pod, v));
        } catch (err) {
          out.set(v.name, errorMessage(err));
        }
      }),
  );
  return out;
}

/**
 * The unique names of the pod's attachable persistent volumes, by pod volume
 * name (upstream PluginIsAttachable; a lookup error counts as not attachable,
 * as upstream CanAttach).
 */
export async function attachableNames(pod: Pod, plugins: readonly VolumePlugin[], claims: ClaimResults): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    [...claims].map(async ([name, claim]) => {
      if (typeof claim !== 'object') return;
      const vol = (pod.spec.volumes ?? []).find((v) => v.name === name);
      const plugin = vol && findPlugin(plugins, vol, claim.pv);
      if (typeof plugin !== 'object' || !plugin.attachableName) return;
      const unique = await plugin.attachableName(claim).catch(() => undefined);
      if (unique) out.set(name, unique);
    }),
  );
  return out;
}

/** The PV-named directory a volume of `plugin` uses, or undefined when it is named after the pod's volume. */
function dirNameOf(plugin: VolumePlugin, persistent: PersistentSpec | undefined): string | undefined {
  return plugin.dirNamedByPV && persistent ? (persistent.pv.metadata?.name ?? '') : undefined;
}

/** The entry for `name`: the existing one, or a PV-named volume found on disk, or a new one. */
function entryFor(entry: PodEntry, name: string, plugin: VolumePlugin, dirName: string | undefined): VolumeEntry {
  let e = entry.volumes.get(name);
  if (e && (e.plugin !== plugin || e.dirName !== dirName)) {
    // The volume's source changed: what was set up is kept under its own key, to be torn down.
    entry.volumes.delete(name);
    if (e.mounted || e.onDisk || e.inFlight) {
      e.desired = false;
      e.dirName ??= name;
      entry.volumes.set(e.dirName ? pvKey(e.dirName) : `${name}:${e.plugin.name}`, e);
    }
    e = undefined;
  }
  if (!e && dirName !== undefined) {
    const found = entry.volumes.get(pvKey(dirName));
    if (found && found.plugin === plugin && !found.inFlight) {
      entry.volumes.delete(pvKey(dirName));
      found.name = name;
      entry.volumes.set(name, found);
      e = found;
    }
  }
  if (!e) {
    e = newVolume(name, plugin, { desired: true, onDisk: false });
    e.dirName = dirName;
    entry.volumes.set(name, e);
  }
  return e;
}

/**
 * Sets the pod's desired volumes on `entry` (errors into entry.errors) and
 * returns the API objects they read.
 */
export function populate(entry: PodEntry, pod: Pod, plugins: readonly VolumePlugin[], host: VolumeHost, claims: ClaimResults): ObjectRef[] {
  const wanted = mountedVolumeNames(pod);
  const wasDesired = new Set([...entry.volumes.values()].filter((e) => e.desired).map((e) => e.name));
  for (const e of entry.volumes.values()) e.desired = false;
  const refs: ObjectRef[] = [];
  for (const vol of pod.spec.volumes ?? []) {
    if (!wanted.has(vol.name)) continue;
    let persistent: PersistentSpec | undefined;
    if (vol.persistentVolumeClaim) {
      const claim = claims.get(vol.name);
      if (typeof claim !== 'object') {
        entry.errors.push(claim ?? `volume ${JSON.stringify(vol.name)}: its claim was not resolved`);
        const kept = entry.volumes.get(vol.name);
        if (kept && wasDesired.has(vol.name)) kept.desired = true;
        continue;
      }
      persistent = claim;
    }
    const plugin = findPlugin(plugins, vol, persistent?.pv);
    if (typeof plugin === 'string') {
      entry.errors.push(plugin);
      continue;
    }
    const problem = plugin.check?.(pod, vol, host);
    if (problem) {
      entry.errors.push(`volume ${JSON.stringify(vol.name)}: ${problem}`);
      continue;
    }
    refs.push(...(plugin.references?.(pod, vol) ?? []));
    const e = entryFor(entry, vol.name, plugin, dirNameOf(plugin, persistent));
    e.desired = true;
    e.persistent = persistent;
    // Reprocess (upstream ReprocessPod): remount plugins whose content follows a source; a volume found on disk is set up again.
    if (e.mounted && plugin.requiresRemount) e.remountRequired = true;
    if (e.onDisk && !e.mounted) e.remountRequired = true;
  }
  return refs;
}
