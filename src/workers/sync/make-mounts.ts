/**
 * A container's CRI mounts (upstream kubelet_pods.go makeMounts plus
 * kuberuntime makeMounts): its volumeMounts over the pod's set-up volumes
 * (subPaths resolved and bound safely), the managed /etc/hosts, and the
 * termination-log file. Runs when the container is about to be created, in
 * the sync task; any error fails that container only (CreateContainerConfigError).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { isAbsolute, posix } from 'node:path';
import type { Container, Pod } from '../../api/pod.js';
import { VolumeError } from '../../common/errors.js';
import { makeDirectory } from '../../common/make-dir.js';
import { writeFileNamed } from '../../common/write-file.js';
import type { Mounter } from '../../common/mounter.js';
import { etcHostsPath, podContainerDir } from '../../pod/pod-dirs.js';
import { prepareSafeSubpath } from '../../pod/subpath.js';
import { MountPropagation, type DeepPartial, type Mount } from '../../gen/runtime/v1/api.js';
import { expand } from '../../pod/env-values.js';
import { ensureHostsFile, ETC_HOSTS_PATH } from './etc-hosts.js';
import type { PodVolume } from '../../pod/sync-types.js';

export interface MakeMountsOptions {
  /** pods/<uid> under --root-dir; without it no hosts file or termination-log file is made. */
  podDir?: string;
  /** The pod's set-up volumes by name (from the volume manager). */
  volumes: Record<string, PodVolume>;
  /** The pod's IPs (the node's for a host-network pod); no hosts file without any. */
  podIPs: readonly string[];
  hostname: string;
  domain: string;
  /** The container's environment, for subPathExpr. */
  env: readonly { name: string; value: string }[];
  mounter: Mounter;
}

/** Upstream translateMountPropagation. */
export function mountPropagation(mode: string | undefined): MountPropagation {
  switch (mode ?? 'None') {
    case 'None':
      return MountPropagation.PROPAGATION_PRIVATE;
    case 'HostToContainer':
      return MountPropagation.PROPAGATION_HOST_TO_CONTAINER;
    case 'Bidirectional':
      return MountPropagation.PROPAGATION_BIDIRECTIONAL;
    default:
      throw new VolumeError(`invalid MountPropagation mode: ${JSON.stringify(mode)}`);
  }
}

/** Upstream ExpandContainerVolumeMounts: every $(VAR) must have a non-empty value. */
export function expandSubPathExpr(expr: string, env: readonly { name: string; value: string }[]): string {
  const values = new Map(env.map((e) => [e.name, e.value]));
  const missing = new Set<string>();
  const out = expand(expr, (name) => {
    const v = values.get(name);
    if (!v) missing.add(name);
    return v ?? '';
  });
  if (missing.size > 0) throw new VolumeError(`missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

/** Upstream's checks of a subPath before it is resolved; returns the error message or undefined. */
export function subPathProblem(subPath: string): string | undefined {
  if (isAbsolute(subPath)) return `error SubPath \`${subPath}\` must not be an absolute path`;
  if (subPath.split('/').includes('..')) return `unable to provision SubPath \`${subPath}\`: must not contain '..'`;
  return undefined;
}

/** 8 hex digits, as upstream's makeUID names termination-log files. */
function makeUID(): string {
  return randomBytes(4).toString('hex');
}

export async function makeMounts(pod: Pod, container: Container, options: MakeMountsOptions): Promise<DeepPartial<Mount>[]> {
  const mounts: DeepPartial<Mount>[] = [];
  let mountEtcHosts = options.podIPs.length > 0 && options.podDir !== undefined;
  const volumeMounts = container.volumeMounts ?? [];
  for (let i = 0; i < volumeMounts.length; i++) {
    const m = volumeMounts[i];
    if (m.mountPath === ETC_HOSTS_PATH) mountEtcHosts = false;
    const vol = options.volumes[m.name];
    if (!vol)
      throw new VolumeError(`cannot find volume ${JSON.stringify(m.name)} to mount into container ${JSON.stringify(container.name)}`);
    let hostPath = vol.path;
    const expr = m['subPathExpr'];
    const subPath = expr ? expandSubPathExpr(expr, options.env) : (m.subPath ?? '');
    if (subPath) {
      const problem = subPathProblem(subPath);
      if (problem) throw new VolumeError(problem);
      if (!options.podDir) throw new VolumeError(`subPath of volumeMount ${JSON.stringify(m.name)} needs the pod directory`);
      // A SubpathError: its message names no host path (it reaches the pod's status); the caller logs its detail.
      hostPath = await prepareSafeSubpath(options.mounter, {
        volumePath: vol.path,
        subPath,
        volumeName: m.name,
        podDir: options.podDir,
        containerName: container.name,
        index: i,
      });
    }
    const rro = m['recursiveReadOnly'];
    if (rro === 'Enabled') {
      throw new VolumeError(
        `volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)}: recursiveReadOnly Enabled is not supported by kubelet-ts`,
      );
    }
    mounts.push({
      containerPath: posix.isAbsolute(m.mountPath) ? m.mountPath : `/${m.mountPath}`,
      hostPath,
      readonly: m.readOnly === true || vol.readOnly,
      selinuxRelabel: false,
      propagation: mountPropagation(m.mountPropagation),
    });
  }
  if (mountEtcHosts) {
    const file = etcHostsPath(options.podDir!);
    ensureHostsFile(file, pod, options.podIPs, options.hostname, options.domain);
    mounts.push({ containerPath: ETC_HOSTS_PATH, hostPath: file, readonly: false, selinuxRelabel: false });
  }
  const tmp = container.terminationMessagePath;
  if (options.podDir && tmp) {
    // A fresh file per container instance, so each run's message is its own.
    const dir = podContainerDir(options.podDir, container.name);
    makeDirectory(dir, `the directory of container ${JSON.stringify(container.name)}`, 0o750);
    const file = `${dir}/${makeUID()}`;
    writeFileNamed(file, `the termination message file of container ${JSON.stringify(container.name)}`, '', { flag: 'wx' });
    chmodSync(file, 0o666);
    mounts.push({ containerPath: posix.isAbsolute(tmp) ? tmp : `/${tmp}`, hostPath: file, readonly: false, selinuxRelabel: false });
  }
  return mounts;
}
