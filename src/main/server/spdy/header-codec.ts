/**
 * SPDY/3 header block compression: all header blocks one side of a
 * connection sends form a single zlib stream primed with the SPDY/3
 * dictionary, each block ending at a sync flush point; the receiver keeps one
 * inflate context for the connection.
 *
 * Sending: Node's zlib has no synchronous API for a long-lived deflate
 * context (its one-shot helpers close the context after each call), and
 * frames must be written in order the moment they are made. So the blocks
 * sent here are what zlib itself writes at compression level 0 with a sync
 * flush, byte for byte: a zlib header naming the dictionary (FDICT, its
 * Adler-32), then for each header block its bytes in uncompressed "stored"
 * deflate blocks followed by the empty stored block that marks a sync flush.
 * That marker matters: Go's inflater (spdystream reads each header block
 * through it, bounded to the frame) hands out a stored block's bytes only
 * once it reads the next block header, and without the marker it would read
 * past the frame. Kubelet header blocks are a few dozen bytes, so not
 * compressing them costs nothing.
 *
 * Receiving: one zlib Inflate with the dictionary for the connection;
 * blocks are inflated in arrival order and each result handed back through a
 * promise, so a caller that waits on each in turn keeps frame order.
 */
import { constants, createInflate, type Inflate } from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';

function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; i++) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const MAX_STORED = 0xffff;
/** The empty stored block a sync flush ends with. */
const SYNC_FLUSH_MARKER = Buffer.from([0, 0, 0, 0xff, 0xff]);

/** The sending side's zlib stream: call `compress` for each header block, in the order the frames go out. */
export class HeaderCompressor {
  private started = false;

  compress(plain: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      // CMF 0x78 (deflate, 32 KiB window), FLG 0x3f (FDICT, level bits 0, check bits making 0x783f a multiple of 31), DICTID.
      const head = Buffer.from([0x78, 0x3f, 0, 0, 0, 0]);
      head.writeUInt32BE(adler32(SPDY3_DICTIONARY), 2);
      parts.push(head);
    }
    let off = 0;
    do {
      const len = Math.min(MAX_STORED, plain.length - off);
      // A stored block, not final: BFINAL 0, BTYPE 00, padded to the byte; LEN and its complement, little-endian.
      const h = Buffer.from([0, len & 0xff, len >> 8, ~len & 0xff, (~len >> 8) & 0xff]);
      parts.push(h, plain.subarray(off, off + len));
      off += len;
    } while (off < plain.length);
    parts.push(SYNC_FLUSH_MARKER);
    return Buffer.concat(parts);
  }
}

/** The receiving side's inflate context for one connection. */
export class HeaderDecompressor {
  private readonly inflate: Inflate;
  private queue: Promise<unknown> = Promise.resolve();
  private failed: Error | undefined;

  /** The output of the block being inflated, and how to fail it (zlib reports errors by event, not to write's callback). */
  private out: Buffer[] = [];
  private rejectCurrent: ((err: Error) => void) | undefined;

  constructor() {
    this.inflate = createInflate({ dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH, flush: constants.Z_SYNC_FLUSH });
    this.inflate.on('error', (err: Error) => {
      this.failed = err;
      this.rejectCurrent?.(new Error(`SPDY header block: ${err.message}`));
    });
    // Flowing, so a large block's output never fills the readable side and holds the write back.
    this.inflate.on('data', (chunk: Buffer) => this.out.push(chunk));
  }

  /** The plain header block of the next compressed block; call in arrival order. */
  decompress(block: Buffer): Promise<Buffer> {
    const next = this.queue.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          if (this.failed) return reject(new Error(`SPDY header block: ${this.failed.message}`));
          this.out = [];
          this.rejectCurrent = reject;
          this.inflate.write(block, (err) => {
            this.rejectCurrent = undefined;
            if (err ?? this.failed) return reject(new Error(`SPDY header block: ${(err ?? this.failed)?.message}`));
            for (let c = this.inflate.read() as Buffer | null; c !== null; c = this.inflate.read() as Buffer | null) this.out.push(c);
            resolve(Buffer.concat(this.out));
          });
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.inflate.destroy();
  }
}
