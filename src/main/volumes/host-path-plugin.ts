/**
 * hostPath volumes and hostPath PersistentVolumes (upstream
 * pkg/volume/hostpath): the host's own path, bound into containers as is.
 * Setup checks the path against its `type` (creating it for
 * DirectoryOrCreate / FileOrCreate); teardown does nothing.
 * Nothing is written under the pod directory, so there is nothing to
 * reconstruct after a restart.
 */
import { mkdir, open, stat } from 'node:fs/promises';
import { VolumeError } from '../../common/errors.js';
import type { MountedVolume, VolumePlugin } from './volume-plugin.js';

export const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';

/** The hostPath `type` values (core/v1 HostPathType), sorted as upstream lists them in messages. */
export const HOST_PATH_TYPES: readonly string[] = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

type FileType = 'Directory' | 'File' | 'Socket' | 'CharDevice' | 'BlockDevice';

const DESCRIPTION: Record<FileType, string> = {
  Directory: 'directory',
  File: 'file',
  Socket: 'socket file',
  CharDevice: 'character device',
  BlockDevice: 'block device',
};

/** Upstream hostutil GetFileType (follows symlinks); undefined when the path does not exist. */
async function fileType(path: string): Promise<FileType | 'other' | undefined> {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (st.isDirectory()) return 'Directory';
  if (st.isFile()) return 'File';
  if (st.isSocket()) return 'Socket';
  if (st.isCharacterDevice()) return 'CharDevice';
  if (st.isBlockDevice()) return 'BlockDevice';
  return 'other';
}

async function expect(path: string, want: FileType): Promise<void> {
  const got = await fileType(path);
  if (got === undefined) throw new VolumeError(`hostPath ${path} doesn't exist`);
  if (got === 'other') {
    throw new VolumeError(
      `hostPath type check failed, ${path} is not a ${DESCRIPTION[want]}, unable to determine its type: only recognise file, directory, socket, block device and character device`,
    );
  }
  if (got !== want) throw new VolumeError(`hostPath type check failed: ${path} is not a ${DESCRIPTION[want]}, it's a ${got}`);
}

/** Upstream checkType. */
export async function checkHostPathType(path: string, type: string): Promise<void> {
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
      if ((await fileType(path)) === undefined) {
        await mkdir(path, { recursive: true, mode: 0o755 });
        return;
      }
      return expect(path, 'Directory');
    case 'Directory':
      return expect(path, 'Directory');
    case 'FileOrCreate':
      if ((await fileType(path)) === undefined) {
        // The parent directory must exist (upstream makeFile).
        await (await open(path, 'a', 0o644)).close();
        return;
      }
      return expect(path, 'File');
    case 'File':
      return expect(path, 'File');
    case 'Socket':
    case 'CharDevice':
    case 'BlockDevice':
      return expect(path, type);
    default:
      throw new VolumeError(`${type} is an invalid volume type`);
  }
}

/** Upstream ValidatePathNoBacksteps. */
export function hasBacksteps(path: string): boolean {
  return path.split('/').includes('..');
}

export const hostPathPlugin: VolumePlugin = {
  name: HOST_PATH_PLUGIN,
  requiresRemount: false,
  canSupport: (v) => v.hostPath !== undefined,
  canSupportPersistent: (pv) => pv.spec?.hostPath !== undefined,
  async setUp(_pod, v, _host, persistent): Promise<MountedVolume> {
    // A hostPath PV is used in place like an inline hostPath, read-only when its claim source is (upstream getVolumeSource).
    const source = persistent ? persistent.pv.spec?.hostPath : v.hostPath;
    const path = source?.path ?? '';
    if (!path.startsWith('/')) throw new VolumeError(`invalid HostPath \`${path}\`: must be an absolute path`);
    if (hasBacksteps(path)) throw new VolumeError(`invalid HostPath \`${path}\`: must not contain '..'`);
    await checkHostPathType(path, source?.type ?? '');
    return { path, readOnly: persistent?.readOnly ?? false };
  },
  async tearDown() {
    // Nothing of a hostPath volume belongs to the pod.
  },
};
