/**
 * Binary encoding of a runtime PodStatus (src/runtime/types.ts), for the
 * shared pod status cache. Pure functions over caller-provided bytes; no
 * shared-memory concerns here (the cache encodes into private scratch and
 * copies under its seqlock).
 *
 * Wire layout, little-endian, no padding:
 *   u8 CODEC_VERSION, f64 timestamp, str uid, str name, str namespace,
 *   strList ips,
 *   u16 nSandboxes × { str id, u8 state, i64 createdAt, u32 attempt,
 *                      u8 hostNetwork, strList ips },
 *   u16 nContainers × { str id, str name, u8 state, i64 createdAt,
 *                       i64 startedAt, i64 finishedAt, i32 exitCode,
 *                       str reason, str message, str image, str imageRef,
 *                       u32 restartCount, str hash, str sandboxId }
 * where str = u16 byte length + UTF-8 bytes and strList = u16 count + str….
 *
 * Limits (CapacityError when exceeded): a string is at most 65535 UTF-8
 * bytes; a list at most 65535 entries; the whole record must fit the region.
 */
import { CapacityError, KubeletTsError } from '../common/errors.js';
import type { ContainerState, ContainerStatus, PodStatus, SandboxState, SandboxStatus } from '../runtime/types.js';

/** Bumped on any change to the wire layout above. */
export const CODEC_VERSION = 1;
const MAX_U16 = 0xffff;
/** Strings up to this many UTF-16 units are copied by a JS loop when ASCII; longer ones use Buffer's native UTF-8 (~50 ns per call). */
const SHORT_STRING = 16;

const CONTAINER_STATES: readonly ContainerState[] = ['created', 'running', 'exited', 'unknown'];
const SANDBOX_STATES: readonly SandboxState[] = ['ready', 'notready'];

/** Thrown internally when the region is too small; converted to CapacityError by `encodePodStatus`. */
/** Thrown inside the encoder when a field does not fit; caught and turned into CapacityError. */
class Overflow extends Error {
  constructor(readonly field: string) {
    super(field);
  }
}
const TOO_LONG = 'too-long';

function containerStateCode(s: ContainerState): number {
  switch (s) {
    case 'created':
      return 0;
    case 'running':
      return 1;
    case 'exited':
      return 2;
    case 'unknown':
      return 3;
  }
}

function sandboxStateCode(s: SandboxState): number {
  return s === 'ready' ? 0 : 1;
}

/** Encoder state for one call; reused across calls to avoid allocation. */
class Writer {
  view!: DataView;
  bytes!: Uint8Array;
  buf!: Buffer;
  pos = 0;
  end = 0;

  reset(bytes: Uint8Array): void {
    if (this.bytes !== bytes) {
      this.bytes = bytes;
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    this.pos = 0;
    this.end = bytes.byteLength;
  }

  need(n: number, field: string): void {
    if (this.pos + n > this.end) throw new Overflow(field);
  }

  u8(v: number, field: string): void {
    this.need(1, field);
    this.view.setUint8(this.pos, v);
    this.pos += 1;
  }

  u16(v: number, field: string): void {
    this.need(2, field);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }

  u32(v: number, field: string): void {
    this.need(4, field);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  i32(v: number, field: string): void {
    this.need(4, field);
    this.view.setInt32(this.pos, v | 0, true);
    this.pos += 4;
  }

  i64(v: bigint, field: string): void {
    this.need(8, field);
    this.view.setBigInt64(this.pos, v, true);
    this.pos += 8;
  }

  f64(v: number, field: string): void {
    this.need(8, field);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  str(s: string, field: string): void {
    const start = this.pos + 2;
    if (start > this.end) throw new Overflow(field);
    const n = s.length;
    if (n === 0) {
      this.view.setUint16(this.pos, 0, true);
      this.pos = start;
      return;
    }
    if (n <= SHORT_STRING && start + n <= this.end) {
      const bytes = this.bytes;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        bytes[start + i] = c;
      }
      if (i === n) {
        this.view.setUint16(this.pos, n, true);
        this.pos = start + n;
        return;
      }
    }
    const space = Math.min(this.end, start + MAX_U16) - start;
    // Buffer#write never writes a partial character; it may stop short only within 3 bytes of `space`.
    const written = this.buf.write(s, start, space, 'utf8');
    if (written > space - 4 && Buffer.byteLength(s, 'utf8') !== written) {
      throw new Overflow(start + MAX_U16 < this.end ? `${field}:${TOO_LONG}` : field);
    }
    this.view.setUint16(this.pos, written, true);
    this.pos = start + written;
  }

  strList(list: readonly string[], field: string): void {
    if (list.length > MAX_U16) throw new Overflow(`${field}:${TOO_LONG}`);
    this.u16(list.length, field);
    for (let i = 0; i < list.length; i++) this.str(list[i], field);
  }
}

const writer = new Writer();

function writeSandbox(w: Writer, s: SandboxStatus): void {
  w.str(s.id, 'sandbox.id');
  w.u8(sandboxStateCode(s.state), 'sandbox.state');
  w.i64(s.createdAt, 'sandbox.createdAt');
  w.u32(s.attempt, 'sandbox.attempt');
  w.u8(s.hostNetwork ? 1 : 0, 'sandbox.hostNetwork');
  w.strList(s.ips, 'sandbox.ips');
}

function writeContainer(w: Writer, c: ContainerStatus): void {
  w.str(c.id, 'container.id');
  w.str(c.name, 'container.name');
  w.u8(containerStateCode(c.state), 'container.state');
  w.i64(c.createdAt, 'container.createdAt');
  w.i64(c.startedAt, 'container.startedAt');
  w.i64(c.finishedAt, 'container.finishedAt');
  w.i32(c.exitCode, 'container.exitCode');
  w.str(c.reason, 'container.reason');
  w.str(c.message, 'container.message');
  w.str(c.image, 'container.image');
  w.str(c.imageRef, 'container.imageRef');
  w.u32(c.restartCount, 'container.restartCount');
  w.str(c.hash, 'container.hash');
  w.str(c.sandboxId, 'container.sandboxId');
}

/**
 * Encodes `status` at the start of `out` and returns the byte length written.
 * Throws CapacityError naming the pod uid and the bytes needed vs available if
 * it does not fit (the contents of `out` are then unspecified). Not reentrant
 * (shares one encoder state per thread), which is fine: it never yields.
 */
export function encodePodStatus(status: PodStatus, out: Uint8Array): number {
  const w = writer;
  w.reset(out);
  try {
    w.u8(CODEC_VERSION, 'version');
    w.f64(status.timestamp, 'timestamp');
    w.str(status.uid, 'uid');
    w.str(status.name, 'name');
    w.str(status.namespace, 'namespace');
    w.strList(status.ips, 'ips');
    const sandboxes = status.sandboxStatuses;
    if (sandboxes.length > MAX_U16) throw new Overflow(`sandboxStatuses:${TOO_LONG}`);
    w.u16(sandboxes.length, 'sandboxStatuses');
    for (let i = 0; i < sandboxes.length; i++) writeSandbox(w, sandboxes[i]);
    const containers = status.containerStatuses;
    if (containers.length > MAX_U16) throw new Overflow(`containerStatuses:${TOO_LONG}`);
    w.u16(containers.length, 'containerStatuses');
    for (let i = 0; i < containers.length; i++) writeContainer(w, containers[i]);
    return w.pos;
  } catch (err) {
    if (!(err instanceof Overflow)) throw err;
    const [field, why] = err.field.split(':');
    if (why === TOO_LONG) {
      throw new CapacityError(
        `pod status of pod ${status.uid}: field ${field} exceeds ${MAX_U16} (UTF-8 bytes or entries); ` +
          'the runtime reported an oversized value; truncate it before caching',
      );
    }
    throw new CapacityError(
      `pod status of pod ${status.uid} needs ${encodedPodStatusSize(status)} bytes but the slot holds ` +
        `${out.byteLength} (overflowed at ${field}); raise slotBytes for the pod status cache`,
    );
  }
}

function strSize(s: string): number {
  return 2 + Buffer.byteLength(s, 'utf8');
}

function strListSize(list: readonly string[]): number {
  let n = 2;
  for (const s of list) n += strSize(s);
  return n;
}

/** Exact encoded size of `status` in bytes. Slower than encoding; for sizing and error messages. */
export function encodedPodStatusSize(status: PodStatus): number {
  let n = 1 + 8 + strSize(status.uid) + strSize(status.name) + strSize(status.namespace);
  n += strListSize(status.ips) + 2;
  for (const s of status.sandboxStatuses) {
    n += strSize(s.id) + 1 + 8 + 4 + 1 + strListSize(s.ips);
  }
  n += 2;
  for (const c of status.containerStatuses) {
    n += strSize(c.id) + strSize(c.name) + 1 + 8 * 3 + 4;
    n += strSize(c.reason) + strSize(c.message) + strSize(c.image) + strSize(c.imageRef);
    n += 4 + strSize(c.hash) + strSize(c.sandboxId);
  }
  return n;
}

/** Decoder state for one call; reused across calls. */
class Reader {
  view!: DataView;
  bytes!: Uint8Array;
  buf!: Buffer;
  pos = 0;
  end = 0;

  reset(bytes: Uint8Array, length: number): void {
    if (this.bytes !== bytes) {
      this.bytes = bytes;
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    this.pos = 0;
    this.end = length;
  }

  check(n: number): void {
    if (this.pos + n > this.end) {
      throw new KubeletTsError(`pod status record truncated: need ${n} bytes at ${this.pos}, record is ${this.end}`);
    }
  }

  u8(): number {
    this.check(1);
    return this.view.getUint8(this.pos++);
  }

  u16(): number {
    this.check(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.check(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  i32(): number {
    this.check(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  i64(): bigint {
    this.check(8);
    const v = this.view.getBigInt64(this.pos, true);
    this.pos += 8;
    return v;
  }

  f64(): number {
    this.check(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  str(): string {
    const n = this.u16();
    this.check(n);
    const start = this.pos;
    this.pos += n;
    if (n <= SHORT_STRING) {
      const bytes = this.bytes;
      let out = '';
      for (let i = start; i < start + n; i++) {
        const c = bytes[i];
        if (c >= 0x80) return this.buf.toString('utf8', start, start + n);
        out += String.fromCharCode(c);
      }
      return out;
    }
    return this.buf.toString('utf8', start, start + n);
  }

  strList(): string[] {
    const n = this.u16();
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = this.str();
    return out;
  }
}

const reader = new Reader();

function enumAt<T>(values: readonly T[], code: number, what: string): T {
  const v = values[code];
  if (v === undefined) throw new KubeletTsError(`pod status record: bad ${what} code ${code}`);
  return v;
}

/**
 * Decodes the `length` bytes at the start of `bytes`. Throws KubeletTsError
 * on a malformed or truncated record (never on a well-formed one).
 */
export function decodePodStatus(bytes: Uint8Array, length: number = bytes.byteLength): PodStatus {
  const r = reader;
  r.reset(bytes, Math.min(length, bytes.byteLength));
  const version = r.u8();
  if (version !== CODEC_VERSION) {
    throw new KubeletTsError(`pod status record has codec version ${version}, expected ${CODEC_VERSION}`);
  }
  const timestamp = r.f64();
  const uid = r.str();
  const name = r.str();
  const namespace = r.str();
  const ips = r.strList();
  const nSandboxes = r.u16();
  const sandboxStatuses = new Array<SandboxStatus>(nSandboxes);
  for (let i = 0; i < nSandboxes; i++) {
    sandboxStatuses[i] = {
      id: r.str(),
      state: enumAt(SANDBOX_STATES, r.u8(), 'sandbox state'),
      createdAt: r.i64(),
      attempt: r.u32(),
      hostNetwork: r.u8() !== 0,
      ips: r.strList(),
    };
  }
  const nContainers = r.u16();
  const containerStatuses = new Array<ContainerStatus>(nContainers);
  for (let i = 0; i < nContainers; i++) {
    containerStatuses[i] = {
      id: r.str(),
      name: r.str(),
      state: enumAt(CONTAINER_STATES, r.u8(), 'container state'),
      createdAt: r.i64(),
      startedAt: r.i64(),
      finishedAt: r.i64(),
      exitCode: r.i32(),
      reason: r.str(),
      message: r.str(),
      image: r.str(),
      imageRef: r.str(),
      restartCount: r.u32(),
      hash: r.str(),
      sandboxId: r.str(),
    };
  }
  if (r.pos !== r.end) {
    throw new KubeletTsError(`pod status record of pod ${uid}: ${r.end - r.pos} trailing bytes`);
  }
  return { uid, name, namespace, ips, sandboxStatuses, containerStatuses, timestamp };
}
