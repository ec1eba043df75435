/**
 * SPDY/3 frames (draft-mbelshe-httpbis-spdy-00, the protocol behind
 * "SPDY/3.1" upgrades that Kubernetes' streaming servers speak through
 * moby/spdystream): encoding each frame the kubelet needs, and a reader that
 * cuts a byte stream into frames. Header blocks are passed in and out as
 * bytes already compressed (header-codec.ts compresses them); the plain
 * header block format (count, then length-prefixed name and value pairs,
 * all 32-bit big-endian) is here too.
 *
 * Control frame: 1 bit set, 15 bits version (3), 16 bits type, 8 bits flags,
 * 24 bits length, data. Data frame: 1 bit clear, 31 bits stream id, 8 bits
 * flags, 24 bits length, data.
 */

export const SPDY_VERSION = 3;

export const FrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

export const FLAG_FIN = 0x01;

/** RST_STREAM status codes used here. */
export const RstStatus = { ProtocolError: 1, RefusedStream: 3, Cancel: 5 } as const;

/** The largest payload a frame's 24-bit length holds. */
export const MAX_FRAME_PAYLOAD = 0xffffff;

export type Frame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'synStream'; streamId: number; associatedId: number; priority: number; flags: number; headerBlock: Buffer }
  | { kind: 'synReply'; streamId: number; flags: number; headerBlock: Buffer }
  | { kind: 'headers'; streamId: number; flags: number; headerBlock: Buffer }
  | { kind: 'rstStream'; streamId: number; status: number }
  | { kind: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { kind: 'ping'; id: number }
  | { kind: 'goAway'; lastGoodStreamId: number; status: number }
  | { kind: 'windowUpdate'; streamId: number; delta: number }
  | { kind: 'unknown'; type: number; version: number; flags: number; payload: Buffer };

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new Error(`SPDY control frame too long (${payload.length} bytes)`);
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE((0x80000000 | (SPDY_VERSION << 16) | type) >>> 0, 0);
  head.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([head, payload]);
}

function u32s(...values: number[]): Buffer {
  const b = Buffer.allocUnsafe(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

export function encodeSynStream(streamId: number, headerBlock: Buffer, flags = 0, priority = 0): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt32BE(streamId & 0x7fffffff, 0);
  fixed.writeUInt32BE(0, 4); // associated-to stream: none
  fixed[8] = (priority & 0x7) << 5;
  fixed[9] = 0; // slot
  return controlFrame(FrameType.SynStream, flags, Buffer.concat([fixed, headerBlock]));
}

export function encodeSynReply(streamId: number, headerBlock: Buffer, flags = 0): Buffer {
  return controlFrame(FrameType.SynReply, flags, Buffer.concat([u32s(streamId & 0x7fffffff), headerBlock]));
}

export function encodeRstStream(streamId: number, status: number): Buffer {
  return controlFrame(FrameType.RstStream, 0, u32s(streamId & 0x7fffffff, status));
}

export function encodePing(id: number): Buffer {
  return controlFrame(FrameType.Ping, 0, u32s(id));
}

export function encodeGoAway(lastGoodStreamId: number, status = 0): Buffer {
  return controlFrame(FrameType.GoAway, 0, u32s(lastGoodStreamId & 0x7fffffff, status));
}

export function encodeWindowUpdate(streamId: number, delta: number): Buffer {
  return controlFrame(FrameType.WindowUpdate, 0, u32s(streamId & 0x7fffffff, delta & 0x7fffffff));
}

/** One DATA frame; `data` must fit one frame (see MAX_FRAME_PAYLOAD). */
export function encodeData(streamId: number, data: Buffer, fin = false): Buffer {
  if (data.length > MAX_FRAME_PAYLOAD) throw new Error(`SPDY data frame too long (${data.length} bytes)`);
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE((((fin ? FLAG_FIN : 0) << 24) | data.length) >>> 0, 4);
  return Buffer.concat([head, data]);
}

/** The plain (uncompressed) header block of `headers`: names are lowercased, as SPDY/3 requires. */
export function encodeHeaderBlock(headers: Iterable<readonly [string, string]>): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  for (const [name, value] of headers) {
    const nb = Buffer.from(name.toLowerCase());
    const vb = Buffer.from(value);
    parts.push(u32s(nb.length), nb, u32s(vb.length), vb);
    n++;
  }
  return Buffer.concat([u32s(n), ...parts]);
}

/** A plain header block's pairs; several values of one name (NUL-separated on the wire) stay one string. */
export function decodeHeaderBlock(block: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let off = 0;
  const need = (len: number) => {
    if (off + len > block.length) throw new Error(`truncated SPDY header block (${block.length} bytes)`);
  };
  need(4);
  const count = block.readUInt32BE(0);
  off = 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = block.readUInt32BE(off);
    off += 4;
    need(nl);
    const name = block.toString('utf8', off, off + nl);
    off += nl;
    need(4);
    const vl = block.readUInt32BE(off);
    off += 4;
    need(vl);
    out.set(name, block.toString('utf8', off, off + vl));
    off += vl;
  }
  return out;
}

function parseControl(type: number, version: number, flags: number, p: Buffer): Frame {
  const need = (len: number) => {
    if (p.length < len) throw new Error(`SPDY control frame type ${type} too short (${p.length} bytes)`);
  };
  switch (type) {
    case FrameType.SynStream:
      need(10);
      return {
        kind: 'synStream',
        streamId: p.readUInt32BE(0) & 0x7fffffff,
        associatedId: p.readUInt32BE(4) & 0x7fffffff,
        priority: p[8] >> 5,
        flags,
        headerBlock: p.subarray(10),
      };
    case FrameType.SynReply:
      need(4);
      return { kind: 'synReply', streamId: p.readUInt32BE(0) & 0x7fffffff, flags, headerBlock: p.subarray(4) };
    case FrameType.Headers:
      need(4);
      return { kind: 'headers', streamId: p.readUInt32BE(0) & 0x7fffffff, flags, headerBlock: p.subarray(4) };
    case FrameType.RstStream:
      need(8);
      return { kind: 'rstStream', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
    case FrameType.Settings: {
      need(4);
      const n = p.readUInt32BE(0);
      need(4 + n * 8);
      const entries = Array.from({ length: n }, (_, i) => {
        const word = p.readUInt32BE(4 + i * 8);
        return { flags: word >>> 24, id: word & 0xffffff, value: p.readUInt32BE(8 + i * 8) };
      });
      return { kind: 'settings', flags, entries };
    }
    case FrameType.Ping:
      need(4);
      return { kind: 'ping', id: p.readUInt32BE(0) };
    case FrameType.GoAway:
      need(8);
      return { kind: 'goAway', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
    case FrameType.WindowUpdate:
      need(8);
      return { kind: 'windowUpdate', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
    default:
      return { kind: 'unknown', type, version, flags, payload: p };
  }
}

/** Cuts a byte stream into frames: push what arrives, get back the frames it completes. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: Frame[] = [];
    while (this.buf.length >= 8) {
      const len = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + len) break;
      const first = this.buf.readUInt32BE(0);
      const flags = this.buf[4];
      // Copy the payload out: the frame outlives the buffer it was cut from.
      const payload = Buffer.from(this.buf.subarray(8, 8 + len));
      this.buf = this.buf.subarray(8 + len);
      if (first & 0x80000000) {
        const version = (first >>> 16) & 0x7fff;
        if (version !== SPDY_VERSION) throw new Error(`SPDY version ${version} frame on a SPDY/${SPDY_VERSION} connection`);
        frames.push(parseControl(first & 0xffff, version, flags, payload));
      } else {
        frames.push({ kind: 'data', streamId: first & 0x7fffffff, flags, data: payload });
      }
    }
    return frames;
  }
}
