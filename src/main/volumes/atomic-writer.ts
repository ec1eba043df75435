/**
 * Writes a volume's files so that a reader never sees a half-updated set
 * (upstream pkg/volume/util/atomic_writer.go). The files live in a timestamped
 * directory `..<time>.<random>`; `..data` is a symlink to the current one, and
 * each user-visible top-level name is a symlink through `..data`:
 *
 *   <target>/key        -> ..data/key
 *   <target>/..data     -> ..2026_11_23_01_02_03.123456
 *
 * An update writes a new timestamped directory, creates the `..data_tmp`
 * symlink to it and renames that over `..data` (one atomic rename(2)), then
 * removes names that left the payload and the old directory. Nothing is
 * written when the content is unchanged.
 *
 * One writer per target directory at a time: the volume manager runs at most
 * one operation per volume.
 */
import { chmod, chown, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import type { Clock } from '../../common/clock.js';
import { VolumeError } from '../../common/errors.js';

export const DATA_DIR_NAME = '..data';
export const NEW_DATA_DIR_NAME = '..data_tmp';
const MAX_FILE_NAME_LENGTH = 255;
const MAX_PATH_LENGTH = 4096;

/** One file of a payload. */
export interface FileProjection {
  data: Buffer;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  /** Owner uid to set (projected service-account tokens with fsUser). */
  fsUser?: number;
}

/** Relative path → file. */
export type Payload = Map<string, FileProjection>;

const isNotFound = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Upstream validatePath: relative, no `..` element, bounded lengths, not starting with `..`. */
export function validatePayloadPath(p: string): string | undefined {
  if (p === '') return `invalid path: must not be empty: ${JSON.stringify(p)}`;
  if (p.startsWith('/')) return `invalid path: must be relative path: ${p}`;
  if (p.length > MAX_PATH_LENGTH) return `invalid path: must be less than or equal to ${MAX_PATH_LENGTH} characters`;
  const items = p.split('/');
  for (const item of items) {
    if (item === '..') return `invalid path: must not contain '..': ${p}`;
    if (item.length > MAX_FILE_NAME_LENGTH)
      return `invalid path: filenames must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`;
  }
  if (items[0].startsWith('..') && items[0].length > 2) return `invalid path: must not start with '..': ${p}`;
  return undefined;
}

function cleanPayload(payload: Payload): Payload {
  const out: Payload = new Map();
  for (const [p, f] of payload) {
    const problem = validatePayloadPath(p);
    if (problem) throw new VolumeError(problem);
    out.set(posix.normalize(p).replace(/\/+$/, ''), f);
  }
  return out;
}

/** `..2006_01_02_15_04_05.` in UTC, as upstream names its timestamped directories. */
function timestampPrefix(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.`;
}

/** Every file and directory below `dir`, relative to it. */
async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    out.push(p);
    if (e.isDirectory()) out.push(...(await walk(dir, p)));
  }
  return out;
}

async function differs(path: string, content: Buffer): Promise<boolean> {
  try {
    await lstat(path);
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
  return !content.equals(await readFile(path));
}

export class AtomicWriter {
  constructor(
    private readonly targetDir: string,
    private readonly clock: Clock,
  ) {}

  /** Writes `payload` as the directory's whole content. Returns false when nothing had to change. */
  async write(payload: Payload): Promise<boolean> {
    const clean = cleanPayload(payload);
    const dataDirPath = join(this.targetDir, DATA_DIR_NAME);
    let oldTsDir = '';
    try {
      oldTsDir = await readlink(dataDirPath);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const oldTsPath = join(this.targetDir, oldTsDir);

    let toRemove: string[] = [];
    if (oldTsDir) {
      toRemove = await this.pathsToRemove(clean, oldTsPath);
      let changed = false;
      for (const [p, f] of clean) {
        if (await differs(join(oldTsPath, p), f.data)) {
          changed = true;
          break;
        }
      }
      if (!changed && toRemove.length === 0) return false;
    }

    const tsDir = await mkdtemp(join(this.targetDir, timestampPrefix(this.clock.now())));
    await chmod(tsDir, 0o755);
    const tsDirName = tsDir.slice(this.targetDir.length + 1);
    try {
      await this.writePayload(clean, tsDir);
      await this.createUserVisibleFiles(clean);
      const newDataDirPath = join(this.targetDir, NEW_DATA_DIR_NAME);
      // A previous writer killed between symlink and rename leaves a stale ..data_tmp behind.
      await unlink(newDataDirPath).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      await symlink(tsDirName, newDataDirPath);
      await rename(newDataDirPath, dataDirPath);
    } catch (err) {
      await rm(tsDir, { recursive: true, force: true });
      throw err;
    }
    for (const p of toRemove) {
      if (!p.includes('/')) await unlink(join(this.targetDir, p)).catch(() => undefined);
    }
    if (oldTsDir) await rm(oldTsPath, { recursive: true, force: true });
    return true;
  }

  /** Paths in the old data directory that neither a new file nor one of its parent directories keeps. */
  private async pathsToRemove(payload: Payload, oldTsPath: string): Promise<string[]> {
    let current: string[];
    try {
      current = await walk(oldTsPath);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
    const keep = new Set<string>();
    for (const file of payload.keys()) {
      for (let p = file; p !== '.' && p !== ''; p = posix.dirname(p)) keep.add(p);
    }
    return current.filter((p) => !keep.has(p));
  }

  private async writePayload(payload: Payload, dir: string): Promise<void> {
    for (const [p, f] of payload) {
      const full = join(dir, p);
      await mkdir(dirname(full), { recursive: true, mode: 0o777 });
      await writeFile(full, f.data, { mode: f.mode });
      // writeFile's mode is masked by the umask; the projection's mode must hold exactly.
      await chmod(full, f.mode);
      if (f.fsUser !== undefined) await chown(full, f.fsUser, -1);
    }
  }

  private async createUserVisibleFiles(payload: Payload): Promise<void> {
    for (const p of payload.keys()) {
      const top = p.split('/')[0];
      const visible = join(this.targetDir, top);
      // Only a missing name gets its symlink (upstream ignores other readlink errors).
      const missing = await readlink(visible).then(
        () => false,
        (err: unknown) => isNotFound(err),
      );
      if (missing) await symlink(join(DATA_DIR_NAME, top), visible);
    }
  }
}
