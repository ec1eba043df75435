/**
 * The layout of a pod's directories under --root-dir, as upstream's kubelet
 * lays them out (pkg/kubelet/kubelet_getters.go, volume/util):
 *
 *   <root>/pods/<uid>/                        the pod directory
 *   <root>/pods/<uid>/volumes/<plugin>/<name> a volume (plugin name escaped: "/" → "~")
 *   <root>/pods/<uid>/plugins/<plugin>/<name> plugin metadata (e.g. emptyDir's "ready" file)
 *   <root>/pods/<uid>/volume-subpaths/<volume>/<container>/<index>  subPath bind mounts
 *   <root>/pods/<uid>/containers/<container>/ per-container files (termination-log files)
 *   <root>/pods/<uid>/etc-hosts               the managed /etc/hosts
 *
 * Pure path functions, used by the main thread (volume manager) and by the
 * sync tasks in workers (subPath binds, etc-hosts, termination-log files).
 */
import { join } from 'node:path';

export const PODS_DIR_NAME = 'pods';
export const VOLUMES_DIR_NAME = 'volumes';
export const PLUGINS_DIR_NAME = 'plugins';
export const VOLUME_SUBPATHS_DIR_NAME = 'volume-subpaths';
export const CONTAINERS_DIR_NAME = 'containers';
export const ETC_HOSTS_FILE_NAME = 'etc-hosts';

/** Upstream utilstrings.EscapeQualifiedName: "kubernetes.io/empty-dir" → "kubernetes.io~empty-dir". */
export function escapePluginName(name: string): string {
  return name.replaceAll('/', '~');
}

/** Upstream UnescapeQualifiedName. */
export function unescapePluginName(name: string): string {
  return name.replaceAll('~', '/');
}

export function podsDir(rootDir: string): string {
  return join(rootDir, PODS_DIR_NAME);
}

export function podDir(rootDir: string, uid: string): string {
  return join(rootDir, PODS_DIR_NAME, uid);
}

export function podVolumesDir(podDirPath: string): string {
  return join(podDirPath, VOLUMES_DIR_NAME);
}

export function podPluginsDir(podDirPath: string): string {
  return join(podDirPath, PLUGINS_DIR_NAME);
}

export function podVolumeSubpathsDir(podDirPath: string): string {
  return join(podDirPath, VOLUME_SUBPATHS_DIR_NAME);
}

/** Where a volume of `plugin` named `volumeName` lives on the host. */
export function volumeDir(podDirPath: string, plugin: string, volumeName: string): string {
  return join(podDirPath, VOLUMES_DIR_NAME, escapePluginName(plugin), volumeName);
}

/** A plugin's metadata directory for one volume (upstream GetPodPluginDir + volume name). */
export function pluginMetaDir(podDirPath: string, plugin: string, volumeName: string): string {
  return join(podDirPath, PLUGINS_DIR_NAME, escapePluginName(plugin), volumeName);
}

/** The bind mount target of volumeMounts[index] of `container` with a subPath into `volumeName`. */
export function subpathMountPath(podDirPath: string, volumeName: string, container: string, index: number): string {
  return join(podDirPath, VOLUME_SUBPATHS_DIR_NAME, volumeName, container, String(index));
}

/** upstream getPodContainerDir. */
export function podContainerDir(podDirPath: string, container: string): string {
  return join(podDirPath, CONTAINERS_DIR_NAME, container);
}

export function etcHostsPath(podDirPath: string): string {
  return join(podDirPath, ETC_HOSTS_FILE_NAME);
}
