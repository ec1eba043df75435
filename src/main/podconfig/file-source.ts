/**
 * The staticPodPath source (upstream config/file.go + file_linux.go).
 *
 * Contract:
 *  - `path` is a directory of manifests (not recursed into; names starting
 *    with '.' ignored) or a single manifest file.
 *  - Every re-list emits one SET of all valid pods. A missing path emits an
 *    empty SET so the source is marked seen.
 *  - Re-lists happen at start, every `checkFrequencyMs` (default 20 s, via the
 *    injected clock) and after a burst of fs.watch events (coalesced into one
 *    re-list after `watchDebounceMs`). The periodic re-list heals missed watch
 *    events and re-creates a lost watcher. Re-lists never overlap; a request
 *    made during one runs once more afterwards.
 *  - Directory mode: an unreadable, malformed or invalid manifest is skipped
 *    (its pod, if any, is removed by that SET); it is logged with its path and
 *    counted once per distinct error, and picked up again once fixed.
 *  - Directory mode: an entry that is not a manifest (a directory, a FIFO, a
 *    device or socket, a symlink to one, an entry stat fails on such as a
 *    symlink loop or a dangling symlink) is skipped without being opened; it
 *    is logged at warn and counted in SKIPPED_ENTRIES_METRIC{reason} when it
 *    appears and each time what it is changes, not on every re-list.
 *  - A manifest is read from a descriptor opened with O_NONBLOCK and checked
 *    to be a regular file, so an entry swapped for a FIFO or a device between
 *    the listing and the read never blocks nor streams without end.
 *  - Single-file mode: an invalid file sends no SET (the previous state is
 *    kept), as upstream.
 *  - A small regular file is read with synchronous calls (open, two reads,
 *    close: about 10 µs locally, a tenth of the promise API's cost), in slices
 *    of READ_SLICE files with the event loop let through between slices. A
 *    manifest directory on a file system that hangs (an unreachable NFS
 *    server) would stall the main thread in such a read, as it stalls
 *    upstream's file-source goroutine; keep staticPodPath on local disk.
 *  - A manifest whose stat (device, inode, size, mtime, ctime) is the one
 *    taken just before its last read, and whose ctime was then over
 *    STABLE_AFTER_MS old, is not read again: a write since that read would
 *    have moved its ctime (the kernel sets it, and the age rules out a second
 *    write within one timestamp tick). Younger files are read every time.
 *  - A re-list whose pods are the ones of the previous SET, file by file,
 *    sends nothing: the SET would change nothing in PodConfig (upstream's
 *    merge of an identical SET makes no ADD, UPDATE or REMOVE), and the
 *    source is already seen. At 1000 manifests that skips ~1000 reads, a
 *    merge and a clone of every pod each fileCheckFrequency.
 */
import { closeSync, constants, openSync, readSync, statSync, watch, type BigIntStats, type FSWatcher, type Stats } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import { ManifestError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { Pod } from '../../api/pod.js';
import { decodePodManifest, manifestErrorsCounter, MAX_MANIFEST_BYTES } from './manifest.js';
import { FILE_SOURCE, type PodSource, type SourceChannel } from './types.js';
import { Nudge, runPeriodically } from '../../common/periodic.js';

/** Manifests read and decoded between two turns of the event loop when listing the directory. */
const READ_SLICE = 64;
/** A manifest shorter than this is read in one read(2); a longer one takes the stat-and-readFile path. */
const ONE_READ_BYTES = 16 * 1024;
/** A file whose ctime is at least this old when stat'ed before a read is not read again until its stat changes. */
const STABLE_AFTER_MS = 2_000;

export const DEFAULT_FILE_CHECK_FREQUENCY_MS = 20_000;
export const DEFAULT_WATCH_DEBOUNCE_MS = 100;

export interface FileSourceOptions {
  path: string;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  checkFrequencyMs?: number;
  /** Watch with fs.watch (default true). When false only the periodic re-list runs. */
  watch?: boolean;
  watchDebounceMs?: number;
}

type Decoded = { ok: true; pod: Pod } | { ok: false; error: ManifestError };

const SKIPPED_ENTRIES_METRIC = 'kubelet_ts_static_pod_manifest_skipped_entries_total';

/** Why a directory entry is not read as a manifest, with upstream extractFromDir's message for it. */
const SKIP_MESSAGES = {
  directory: 'Not recursing into manifest path',
  not_regular_file: 'Manifest path is not a directory or regular file, skipping it',
  stat_failed: 'Cannot get metadata for manifest path, skipping it',
} as const;

/** A directory entry that is not read as a manifest. */
interface Skipped {
  reason: keyof typeof SKIP_MESSAGES;
  /** What the entry is (its file type or stat's errno): a change of it is logged again. */
  detail: string;
  fields: Record<string, unknown>;
}

/** kubelet_ts_static_pod_manifest_skipped_entries_total{reason} (not an upstream metric), one per registry. */
function skippedEntriesCounter(registry: Registry): Counter<'reason'> {
  const existing = registry.getSingleMetric(SKIPPED_ENTRIES_METRIC);
  if (existing) return existing as Counter<'reason'>;
  return new Counter({
    name: SKIPPED_ENTRIES_METRIC,
    help: 'Entries of the static pod directory skipped as not manifests (directory, not_regular_file, stat_failed), counted when one appears or changes.',
    labelNames: ['reason'],
    registers: [registry],
  });
}

function fileType(info: Stats): string {
  if (info.isFIFO()) return 'FIFO';
  if (info.isCharacterDevice()) return 'character device';
  if (info.isBlockDevice()) return 'block device';
  if (info.isSocket()) return 'socket';
  return 'unknown';
}

export class FileSource implements PodSource {
  readonly name = FILE_SOURCE;
  private readonly log: Logger;
  private readonly errors: Counter<'source'>;
  private readonly skippedEntries: Counter<'reason'>;
  private readonly period: number;
  private readonly debounce: number;
  /**
   * Last content and decode result per manifest path; a reused pod is cloned.
   * `stat`: the file's identity taken before that read, when it was stable.
   */
  private readonly cache = new Map<string, { content: string; result: Decoded; stat?: string }>();
  /** The results the last SET was made of, in order (undefined: none sent, or the path went missing). */
  private lastSet: Decoded[] | undefined;
  /** Last error message reported per path (log and count once per distinct error). */
  private readonly reported = new Map<string, string>();
  /** reason and detail of each entry the last directory listing skipped (logged and counted when they change). */
  private skipped = new Map<string, string>();
  private out: SourceChannel | undefined;
  private signal: AbortSignal | undefined;
  private watcher: FSWatcher | undefined;
  /** Ends the wait for the next periodic re-list: a watch event or a re-list asked for during one. */
  private readonly nudge = new Nudge();
  private cancelDebounce: (() => void) | undefined;
  private running = false;
  private relistCount = 0;
  private readCount = 0;
  private again = false;
  private missingLogged = false;
  /** readSmallFile's buffer, allocated on first use. */
  private buffer: Buffer | undefined;

  constructor(private readonly opts: FileSourceOptions) {
    this.log = opts.logger.child({ source: FILE_SOURCE, path: opts.path });
    this.errors = manifestErrorsCounter(opts.registry);
    this.skippedEntries = skippedEntriesCounter(opts.registry);
    this.period = opts.checkFrequencyMs ?? DEFAULT_FILE_CHECK_FREQUENCY_MS;
    this.debounce = opts.watchDebounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;
  }

  start(signal: AbortSignal, out: SourceChannel): void {
    if (this.out) throw new Error('FileSource.start called twice');
    this.out = out;
    this.signal = signal;
    signal.addEventListener('abort', () => this.shutdown(), { once: true });
    if (signal.aborted) return this.shutdown();
    this.log.info({ checkFrequencyMs: this.period, watch: this.opts.watch !== false }, 'Watching static pod path');
    const onError = (err: unknown) => this.log.error({ err }, 'Static pod path re-list loop failed');
    runPeriodically(() => this.relistOnce(), {
      periodMs: this.period,
      immediate: true,
      nudge: this.nudge,
      signal,
      clock: this.opts.clock,
      onError,
    }).catch(onError);
  }

  /** Re-lists completed so far (one SET or none each, see the module contract). */
  get relists(): number {
    return this.relistCount;
  }

  /** Manifests read so far (a manifest whose stat stands for its content is not read again). */
  get reads(): number {
    return this.readCount;
  }

  /** True when no re-list is running or requested. */
  get idle(): boolean {
    return !this.running && !this.again;
  }

  private shutdown(): void {
    this.cancelDebounce?.();
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** One re-list; the loop waits a period after it, or runs again at once if one was asked for meanwhile. */
  private async relistOnce(): Promise<void> {
    this.running = true;
    this.again = false;
    try {
      await this.relist();
    } catch (err) {
      this.log.error({ err }, 'Unable to read config path');
    } finally {
      this.running = false;
      this.relistCount++;
    }
  }

  /** A re-list now, or right after the one running. */
  private requestRelist(): void {
    if (this.signal?.aborted) return;
    if (this.running) this.again = true;
    this.nudge.fire();
  }

  private onWatchEvent(filename: string | null): void {
    if (filename && basename(filename).startsWith('.')) return;
    if (this.cancelDebounce) return;
    this.cancelDebounce = this.opts.clock.setTimer(this.debounce, () => {
      this.cancelDebounce = undefined;
      this.requestRelist();
    });
  }

  private ensureWatcher(target: string, onlyName?: string): void {
    if (this.opts.watch === false || this.watcher || this.signal?.aborted) return;
    try {
      const w = watch(target, { persistent: false }, (_event, filename) => {
        const name = filename?.toString() ?? null;
        if (onlyName && name !== null && name !== onlyName) return;
        this.onWatchEvent(name);
      });
      w.on('error', (err) => {
        this.log.warn({ err }, 'Static pod path watch failed; relying on periodic re-list until it is re-established');
        w.close();
        if (this.watcher === w) this.watcher = undefined;
        this.onWatchEvent(null);
      });
      this.watcher = w;
    } catch (err) {
      this.log.warn({ err }, 'Unable to watch static pod path; relying on periodic re-list');
    }
  }

  private emit(pods: Pod[]): void {
    if (!this.signal?.aborted) this.out?.({ op: 'SET', pods });
  }

  /** A SET of the valid pods among `results`, unless they are the previous SET's (module contract). */
  private emitResults(results: Decoded[]): void {
    const last = this.lastSet;
    if (last && last.length === results.length && last.every((r, i) => r === results[i])) return;
    this.lastSet = results;
    this.emit(results.flatMap((r) => (r.ok ? [structuredClone(r.pod)] : [])));
  }

  private async relist(): Promise<void> {
    const path = this.opts.path;
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      if (!this.missingLogged) this.log.info('Static pod path does not exist, ignoring');
      this.missingLogged = true;
      this.watcher?.close();
      this.watcher = undefined;
      this.cache.clear();
      this.reported.clear();
      this.skipped.clear();
      this.lastSet = undefined;
      return this.emit([]);
    }
    this.missingLogged = false;
    if (info.isDirectory()) {
      this.ensureWatcher(path);
      return this.emitResults(await this.listDir(path));
    }
    this.skipped.clear();
    if (info.isFile()) {
      this.ensureWatcher(dirname(path), basename(path));
      const r = await this.decodeFile(path, info.size);
      this.prune(new Set([path]));
      if (r.ok) this.emitResults([r]);
      return;
    }
    throw new ManifestError(`${path}: static pod path is not a directory or regular file; point staticPodPath at a directory of manifests`);
  }

  /** Every manifest's decode result (valid or not), in file-name order. */
  private async listDir(dir: string): Promise<Decoded[]> {
    const entries = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const live = new Set<string>();
    const skipped = new Map<string, Skipped>();
    // In name order for the result; the event loop runs between slices.
    const decoded: (Decoded | undefined)[] = [];
    for (let i = 0; i < entries.length; i++) {
      if (i > 0 && i % READ_SLICE === 0) await yieldToLoop();
      decoded.push(await this.readEntry(join(dir, entries[i].name), entries[i].isFile(), live, skipped));
    }
    this.prune(live);
    this.reportSkipped(skipped);
    return decoded.filter((r) => r !== undefined);
  }

  /**
   * One directory entry: a small regular file (as readdir saw it) in one
   * synchronous read, anything else through stat; what is not a regular file
   * (upstream extractFromDir's cases) goes to `skipped` unopened.
   */
  private async readEntry(file: string, isFile: boolean, live: Set<string>, skipped: Map<string, Skipped>): Promise<Decoded | undefined> {
    const identity = isFile ? stableIdentity(file) : undefined;
    const cached = this.cache.get(file);
    if (identity !== undefined && cached?.stat === identity) {
      live.add(file);
      return cached.result;
    }
    const content = isFile ? this.readSmallFile(file) : undefined;
    if (content !== undefined) {
      live.add(file);
      return this.decodeFile(file, Buffer.byteLength(content), content, identity);
    }
    let info;
    try {
      info = await stat(file);
    } catch (err) {
      const errno = (err as NodeJS.ErrnoException).code ?? 'unknown';
      // Gone since the listing (not a dangling symlink): nothing to report.
      if (errno === 'ENOENT' && !(await lstat(file).then(Boolean, () => false))) return undefined;
      skipped.set(file, { reason: 'stat_failed', detail: errno, fields: { errno, err: { message: errorMessage(err) } } });
      return undefined;
    }
    if (info.isFile()) {
      live.add(file);
      return this.decodeFile(file, info.size);
    }
    if (info.isDirectory()) skipped.set(file, { reason: 'directory', detail: '', fields: {} });
    else skipped.set(file, { reason: 'not_regular_file', detail: fileType(info), fields: { fileType: fileType(info) } });
    return undefined;
  }

  /** Logs and counts each skipped entry that is new or changed since the previous listing. */
  private reportSkipped(now: Map<string, Skipped>): void {
    const keys = new Map<string, string>();
    for (const [file, s] of now) {
      const key = `${s.reason}:${s.detail}`;
      keys.set(file, key);
      if (this.skipped.get(file) === key) continue;
      this.skippedEntries.inc({ reason: s.reason });
      this.log.warn({ file, reason: s.reason, ...s.fields }, SKIP_MESSAGES[s.reason]);
    }
    this.skipped = keys;
  }

  /**
   * The whole content of a file shorter than ONE_READ_BYTES: one open, two
   * read(2)s (the second confirms the end of the file) and one close, all
   * synchronous (module contract). Undefined when that does not settle it
   * (the file is longer, or cannot be opened or read): the caller then stats
   * and reads it with the promise API, which skips what is not a regular file
   * and reports errors. O_NONBLOCK: a FIFO put in the file's place never
   * blocks the open.
   */
  private readSmallFile(file: string): string | undefined {
    let fd;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    const buf = (this.buffer ??= Buffer.allocUnsafeSlow(ONE_READ_BYTES));
    try {
      const bytesRead = readSync(fd, buf, 0, buf.length, 0);
      if (bytesRead >= buf.length) return undefined;
      // A short read is the end of a local file, but not always elsewhere (NFS, FUSE): take it only once the
      // next read finds nothing after it, so a partly read manifest is never decoded as a whole one.
      return readSync(fd, buf, bytesRead, 1, bytesRead) === 0 ? buf.toString('utf8', 0, bytesRead) : undefined;
    } catch {
      return undefined;
    } finally {
      try {
        closeSync(fd);
      } catch {
        // the read's result stands; a failed close of a read-only descriptor loses nothing
      }
    }
  }

  private prune(live: Set<string>): void {
    for (const k of this.cache.keys()) if (!live.has(k)) this.cache.delete(k);
    for (const k of this.reported.keys()) if (!live.has(k)) this.reported.delete(k);
  }

  /** `content`: the file's text when already read; `stat`: its stable identity from before that read. */
  private async decodeFile(file: string, size: number, content?: string, stat?: string): Promise<Decoded> {
    let result: Decoded;
    if (size > MAX_MANIFEST_BYTES) {
      this.cache.delete(file);
      result = {
        ok: false,
        error: new ManifestError(`${file}: manifest is ${size} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit; shrink it`),
      };
    } else {
      this.readCount++;
      try {
        content ??= await readRegularFile(file);
      } catch (err) {
        result = {
          ok: false,
          error:
            err instanceof ManifestError
              ? err
              : new ManifestError(`${file}: cannot read manifest: ${errorMessage(err)}; check its permissions`, { cause: err }),
        };
      }
      if (content === undefined) {
        this.cache.delete(file);
        result ??= { ok: false, error: new ManifestError(`${file}: cannot read manifest`) };
      } else {
        const cached = this.cache.get(file);
        result = cached?.content === content ? cached.result : this.decode(file, content);
        this.cache.set(file, { content, result, stat });
      }
    }
    this.report(file, result);
    return result;
  }

  /** Runs once per content of a file (cached), so a pod's unknown fields are warned about once per change. */
  private decode(file: string, content: string): Decoded {
    try {
      const pod = decodePodManifest(content, {
        manifestSource: file,
        isFile: true,
        sourceName: FILE_SOURCE,
        nodeName: this.opts.nodeName,
        clock: this.opts.clock,
        onUnknownField: (f) =>
          this.log.warn({ file, field: f.path, hint: f.hint || undefined }, 'Unknown field in static pod manifest, ignored'),
      });
      return { ok: true, pod };
    } catch (err) {
      if (err instanceof ManifestError) return { ok: false, error: err };
      return { ok: false, error: new ManifestError(`${file}: ${errorMessage(err)}`, { cause: err }) };
    }
  }

  private report(file: string, r: Decoded): void {
    if (r.ok) {
      if (this.reported.delete(file)) this.log.info({ file }, 'Static pod manifest is valid again');
      return;
    }
    const msg = r.error.message;
    if (this.reported.get(file) === msg) return;
    this.reported.set(file, msg);
    this.errors.inc({ source: FILE_SOURCE });
    this.log.error({ file, err: { code: r.error.code, message: msg } }, 'Cannot process static pod manifest, skipping it');
  }
}

/**
 * The file's device, inode, size, mtime and ctime as one string, when it is a
 * regular file whose ctime is over STABLE_AFTER_MS old; undefined otherwise
 * (too young to be trusted, not a regular file, or stat failed).
 */
function stableIdentity(file: string): string | undefined {
  let st: BigIntStats | undefined;
  try {
    st = statSync(file, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!st?.isFile() || BigInt(Date.now()) - st.ctimeNs / 1_000_000n < STABLE_AFTER_MS) return undefined;
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * The file's text, from a descriptor opened with O_NONBLOCK (a FIFO put in
 * its place since the stat never blocks the open) and checked with fstat to
 * be a regular file before any read.
 */
async function readRegularFile(file: string): Promise<string> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await fh.stat();
    if (!info.isFile()) throw new ManifestError(`${file}: cannot read manifest: it is a ${fileType(info)}, not a regular file`);
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}
