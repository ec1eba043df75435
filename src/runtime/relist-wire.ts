/**
 * The relist's partial decode of ListPodSandboxResponse and
 * ListContainersResponse: a protobuf wire-format reader that extracts only
 * the fields groupPods needs and steps over everything else (annotations
 * other than the container hash, other labels, image fields, runtime
 * handler, unknown fields) without materialising it.
 *
 * Why not the generated decoder: at 250–1000 containers the full ts-proto
 * decode (every label and annotation into a fresh object, every string
 * decoded) is most of the relist's list phase (bench/results/relist-decode.md).
 * Why not @bufbuild/protobuf's BinaryReader for the framing: its tag() and
 * skip() allocate per field. Field numbers, wire types and the proto3 rules
 * the generated decoder applies (last value wins, a repeated submessage
 * replaces the earlier one, an unexpected wire type is skipped as unknown)
 * are kept, so the projection equals the full decode projected
 * (test/unit/relist-wire.test.ts checks this against the ts-proto encoder).
 *
 * Malformed input (truncated field, overlong varint, bad wire type or field
 * number 0) throws KubeletTsError naming the message, byte offset and
 * problem; CriClient.callDecoded turns it into a failed call (CriError,
 * code INTERNAL, as grpc-js reports a response it cannot parse), so the
 * relist fails and is retried next period as on any CRI error.
 *
 * Pure functions; callers: CriRuntime.getPods (worker and inline modes).
 */
import { KubeletTsError } from '../common/errors.js';
import { ANNOTATION_CONTAINER_HASH, LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from './types.js';

/** The fields of a listed PodSandbox the relist reads. Labels absent from the sandbox are undefined. */
export interface ListedSandbox {
  id: string;
  /** PodSandboxState enum value. */
  state: number;
  createdAt: bigint;
  podUid: string | undefined;
  podName: string | undefined;
  podNamespace: string | undefined;
}

/** The fields of a listed Container the relist reads. */
export interface ListedContainer {
  id: string;
  podSandboxId: string;
  /** metadata.name; undefined when the container has no metadata. */
  metadataName: string | undefined;
  /** ContainerState enum value. */
  state: number;
  createdAt: bigint;
  podUid: string | undefined;
  podName: string | undefined;
  podNamespace: string | undefined;
  containerName: string | undefined;
  /** The io.kubernetes.container.hash annotation. */
  hash: string | undefined;
}

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;
const MAX_DEPTH = 32;

const ascii = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const POD_UID = ascii(LABEL_POD_UID);
const POD_NAME = ascii(LABEL_POD_NAME);
const POD_NAMESPACE = ascii(LABEL_POD_NAMESPACE);
const CONTAINER_NAME = ascii(LABEL_CONTAINER_NAME);
const CONTAINER_HASH = ascii(ANNOTATION_CONTAINER_HASH);
const SANDBOX_LABELS = [POD_UID, POD_NAME, POD_NAMESPACE];
const CONTAINER_LABELS = [POD_UID, POD_NAME, POD_NAMESPACE, CONTAINER_NAME];
const CONTAINER_ANNOTATIONS = [CONTAINER_HASH];

/**
 * A cursor over one response buffer. Methods read at `pos` and advance it;
 * every read is bounds-checked against `end` of the enclosing message.
 */
class Cursor {
  pos = 0;
  /** Result slots of the last mapEntry(): index into the wanted keys (-1: none) and the value's byte range. */
  entryKey = -1;
  entryStart = 0;
  entryEnd = 0;

  constructor(
    readonly buf: Buffer,
    private readonly what: string,
  ) {}

  fail(problem: string, at = this.pos): never {
    throw new KubeletTsError(`${this.what}: malformed response at byte ${at} of ${this.buf.length}: ${problem}`);
  }

  /** A varint's low 32 bits, unsigned (tags, lengths, enums via `| 0`). */
  uint32(end: number): number {
    const buf = this.buf;
    let result = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= end) this.fail('truncated varint');
      const b = buf[this.pos++];
      if (shift < 32) result |= (b & 0x7f) << shift;
      if (b < 0x80) return result >>> 0;
    }
    return this.fail('varint longer than 10 bytes');
  }

  /** A varint as a signed 64-bit bigint (proto int64). */
  int64(end: number): bigint {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) this.fail('truncated varint');
      const b = buf[this.pos++];
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi = (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
    }
    return this.fail('varint longer than 10 bytes');
  }

  /** A length prefix; returns the end offset of the delimited bytes. */
  delimited(end: number): number {
    const start = this.pos;
    const len = this.uint32(end);
    if (len > end - this.pos) this.fail(`length ${len} runs past the end of its message (${end - this.pos} bytes left)`, start);
    return this.pos + len;
  }

  string(end: number): string {
    const stop = this.delimited(end);
    const s = this.buf.toString('utf8', this.pos, stop);
    this.pos = stop;
    return s;
  }

  /** Reads a tag; fails on field number 0 (the generated decoder would stop there). */
  tag(end: number): number {
    const at = this.pos;
    const tag = this.uint32(end);
    if (tag >>> 3 === 0) this.fail(`field number 0 (tag ${tag})`, at);
    return tag;
  }

  /** Steps over one field's value of the given wire type. */
  skip(tag: number, end: number, depth = 0): void {
    switch (tag & 7) {
      case VARINT:
        this.uint32(end);
        return;
      case FIXED64:
        return this.advance(8, end);
      case LEN:
        this.pos = this.delimited(end);
        return;
      case FIXED32:
        return this.advance(4, end);
      case START_GROUP: {
        if (depth >= MAX_DEPTH) this.fail('groups nested too deeply');
        for (;;) {
          const inner = this.tag(end);
          if ((inner & 7) === END_GROUP) {
            if (inner >>> 3 !== tag >>> 3) this.fail(`end group ${inner >>> 3} closes group ${tag >>> 3}`);
            return;
          }
          this.skip(inner, end, depth + 1);
        }
      }
      default:
        this.fail(`wire type ${tag & 7} (field ${tag >>> 3})`);
    }
  }

  private advance(n: number, end: number): void {
    if (end - this.pos < n) this.fail(`truncated ${n}-byte field`);
    this.pos += n;
  }

  /**
   * Reads one map<string,string> entry (the cursor is at its length prefix).
   * Sets entryKey to the index of its key in `wanted` (-1 if none) and
   * entryStart/entryEnd to its value's bytes; decodes nothing.
   */
  mapEntry(end: number, wanted: readonly Uint8Array[]): void {
    const stop = this.delimited(end);
    let keyStart = 0;
    let keyEnd = 0;
    let valueStart = 0;
    let valueEnd = 0;
    while (this.pos < stop) {
      const tag = this.tag(stop);
      if (tag === 10 || tag === 18) {
        const e = this.delimited(stop);
        if (tag === 10) {
          keyStart = this.pos;
          keyEnd = e;
        } else {
          valueStart = this.pos;
          valueEnd = e;
        }
        this.pos = e;
      } else this.skip(tag, stop);
    }
    this.entryKey = -1;
    this.entryStart = valueStart;
    this.entryEnd = valueEnd;
    const len = keyEnd - keyStart;
    for (let k = 0; k < wanted.length; k++) {
      const key = wanted[k];
      if (key.length !== len) continue;
      let i = len - 1;
      while (i >= 0 && this.buf[keyStart + i] === key[i]) i--;
      if (i < 0) {
        this.entryKey = k;
        return;
      }
    }
  }

  entryValue(): string {
    return this.buf.toString('utf8', this.entryStart, this.entryEnd);
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a ListPodSandboxResponse to the relist's projection of each item. */
export function decodeListedSandboxes(bytes: Uint8Array): ListedSandbox[] {
  return decodeList(bytes, 'ListPodSandboxResponse', sandbox);
}

/** Decodes a ListContainersResponse to the relist's projection of each item. */
export function decodeListedContainers(bytes: Uint8Array): ListedContainer[] {
  return decodeList(bytes, 'ListContainersResponse', container);
}

/** A list response: its repeated field 1 decoded by `item`, everything else skipped. */
function decodeList<T>(bytes: Uint8Array, what: string, item: (c: Cursor, end: number) => T): T[] {
  const c = new Cursor(asBuffer(bytes), what);
  const out: T[] = [];
  const end = c.buf.length;
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag === 10) out.push(item(c, c.delimited(end)));
    else c.skip(tag, end);
  }
  return out;
}

function sandbox(c: Cursor, end: number): ListedSandbox {
  const s: ListedSandbox = { id: '', state: 0, createdAt: 0n, podUid: undefined, podName: undefined, podNamespace: undefined };
  while (c.pos < end) {
    const tag = c.tag(end);
    switch (tag) {
      case 10: // id
        s.id = c.string(end);
        break;
      case 24: // state
        s.state = c.uint32(end) | 0;
        break;
      case 32: // created_at
        s.createdAt = c.int64(end);
        break;
      case 42: // labels
        c.mapEntry(end, SANDBOX_LABELS);
        if (c.entryKey === 0) s.podUid = c.entryValue();
        else if (c.entryKey === 1) s.podName = c.entryValue();
        else if (c.entryKey === 2) s.podNamespace = c.entryValue();
        break;
      default: // metadata, annotations, runtime_handler, unknown
        c.skip(tag, end);
    }
  }
  return s;
}

function container(c: Cursor, end: number): ListedContainer {
  const r: ListedContainer = {
    id: '',
    podSandboxId: '',
    metadataName: undefined,
    state: 0,
    createdAt: 0n,
    podUid: undefined,
    podName: undefined,
    podNamespace: undefined,
    containerName: undefined,
    hash: undefined,
  };
  while (c.pos < end) {
    const tag = c.tag(end);
    switch (tag) {
      case 10: // id
        r.id = c.string(end);
        break;
      case 18: // pod_sandbox_id
        r.podSandboxId = c.string(end);
        break;
      case 26: // metadata: a later occurrence replaces an earlier one, as in the generated decoder
        r.metadataName = metadataName(c, c.delimited(end));
        break;
      case 48: // state
        r.state = c.uint32(end) | 0;
        break;
      case 56: // created_at
        r.createdAt = c.int64(end);
        break;
      case 66: // labels
        c.mapEntry(end, CONTAINER_LABELS);
        if (c.entryKey === 0) r.podUid = c.entryValue();
        else if (c.entryKey === 1) r.podName = c.entryValue();
        else if (c.entryKey === 2) r.podNamespace = c.entryValue();
        else if (c.entryKey === 3) r.containerName = c.entryValue();
        break;
      case 74: // annotations
        c.mapEntry(end, CONTAINER_ANNOTATIONS);
        if (c.entryKey === 0) r.hash = c.entryValue();
        break;
      default: // image, image_ref, image_id, unknown
        c.skip(tag, end);
    }
  }
  return r;
}

/** ContainerMetadata.name ('' when the message has none). */
function metadataName(c: Cursor, end: number): string {
  let name = '';
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag === 10) name = c.string(end);
    else c.skip(tag, end);
  }
  return name;
}
