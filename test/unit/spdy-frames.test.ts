/**
 * The SPDY/3 framer and header compression (src/main/server/spdy): frames
 * round-trip through encode and FrameReader however the bytes are cut, the
 * wire layout matches the SPDY/3 draft byte for byte, and header blocks
 * survive compression both ways: ours (stored deflate blocks) read by plain
 * zlib with the dictionary, and real zlib compression at level 9 (what Go's
 * spdystream sends) read by ours, across several blocks on one context.
 */
import { constants, createDeflate, createInflate } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from '../../src/main/server/spdy/dictionary.js';
import {
  decodeHeaderBlock,
  encodeData,
  encodeGoAway,
  encodeHeaderBlock,
  encodePing,
  encodeRstStream,
  encodeSynReply,
  encodeSynStream,
  encodeWindowUpdate,
  FLAG_FIN,
  FrameReader,
} from '../../src/main/server/spdy/frames.js';
import { HeaderCompressor, HeaderDecompressor } from '../../src/main/server/spdy/header-codec.js';

/** Writes each block through a zlib transform with a sync flush; resolves with each block's output. */
async function throughZlib(z: ReturnType<typeof createDeflate> | ReturnType<typeof createInflate>, blocks: Buffer[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let current: Buffer[] = [];
  z.on('data', (c: Buffer) => current.push(c));
  const failed = new Promise<never>((_, reject) => z.once('error', reject));
  for (const b of blocks) {
    current = [];
    await Promise.race([failed, new Promise<void>((resolve) => z.write(b, () => resolve()))]);
    out.push(Buffer.concat(current));
  }
  return out;
}

describe('SPDY/3 frames', () => {
  it('lays out control and data frames as the draft says', () => {
    expect(encodePing(7).toString('hex')).toBe('8003000600000004' + '00000007');
    expect(encodeRstStream(3, 5).toString('hex')).toBe('8003000300000008' + '00000003' + '00000005');
    expect(encodeGoAway(9, 0).toString('hex')).toBe('8003000700000008' + '00000009' + '00000000');
    expect(encodeWindowUpdate(1, 65536).toString('hex')).toBe('8003000900000008' + '00000001' + '00010000');
    expect(encodeData(5, Buffer.from('hi'), true).toString('hex')).toBe('00000005' + '01000002' + '6869');
    // SYN_STREAM: id, associated id, priority (3 bits) and slot, then the header block.
    expect(encodeSynStream(1, Buffer.from([0xaa]), FLAG_FIN, 3).toString('hex')).toBe(
      '800300010100000b' + '00000001' + '00000000' + '6000' + 'aa',
    );
  });

  it('reads back every frame, whole or cut into single bytes', () => {
    const wire = Buffer.concat([
      encodeSynStream(1, Buffer.from('hb1')),
      encodeSynReply(1, Buffer.from('hb2'), FLAG_FIN),
      encodeData(1, Buffer.from('payload')),
      encodeData(3, Buffer.alloc(0), true),
      encodeRstStream(3, 5),
      encodePing(2),
      encodeGoAway(7, 1),
      encodeWindowUpdate(1, 100),
    ]);
    const expected = [
      { kind: 'synStream', streamId: 1, associatedId: 0, priority: 0, flags: 0, headerBlock: Buffer.from('hb1') },
      { kind: 'synReply', streamId: 1, flags: FLAG_FIN, headerBlock: Buffer.from('hb2') },
      { kind: 'data', streamId: 1, flags: 0, data: Buffer.from('payload') },
      { kind: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.alloc(0) },
      { kind: 'rstStream', streamId: 3, status: 5 },
      { kind: 'ping', id: 2 },
      { kind: 'goAway', lastGoodStreamId: 7, status: 1 },
      { kind: 'windowUpdate', streamId: 1, delta: 100 },
    ];
    expect(new FrameReader().push(wire)).toEqual(expected);
    const reader = new FrameReader();
    const frames = [...wire].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(frames).toEqual(expected);
  });

  it('refuses a control frame of another SPDY version', () => {
    const v2 = encodePing(1);
    v2.writeUInt16BE(0x8002, 0);
    expect(() => new FrameReader().push(v2)).toThrow('SPDY version 2 frame on a SPDY/3 connection');
  });

  it('encodes header blocks with lowercased names and decodes them', () => {
    const block = encodeHeaderBlock([
      ['streamType', 'stdout'],
      ['X-Empty', ''],
    ]);
    expect(block.subarray(0, 8).toString('hex')).toBe('00000002' + '0000000a');
    expect([...decodeHeaderBlock(block)]).toEqual([
      ['streamtype', 'stdout'],
      ['x-empty', ''],
    ]);
    expect(() => decodeHeaderBlock(block.subarray(0, 12))).toThrow('truncated SPDY header block');
  });
});

describe('SPDY/3 header compression with the dictionary', () => {
  const blocks = ['error', 'stdin', 'stdout', 'stderr', 'resize'].map((t) => encodeHeaderBlock([['streamtype', t]]));

  it('the dictionary is the SPDY/3 one (1423 bytes, starting with the "options" entry)', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(SPDY3_DICTIONARY.subarray(0, 11).toString('latin1')).toBe('\0\0\0\x07options');
  });

  it('what the compressor sends, zlib inflates with the SPDY/3 dictionary, block after block on one context', async () => {
    const c = new HeaderCompressor();
    const sent = blocks.map((b) => c.compress(b));
    // The first block opens the zlib stream naming the dictionary (FDICT, Adler-32 e3c6a7c2).
    expect(sent[0].subarray(0, 6).toString('hex')).toBe('783fe3c6a7c2');
    // Byte for byte what zlib writes at level 0 with a sync flush after each block, the empty stored block included.
    const zlib0 = await throughZlib(createDeflate({ dictionary: SPDY3_DICTIONARY, level: 0, flush: constants.Z_SYNC_FLUSH }), blocks);
    expect(sent).toEqual(zlib0);
    expect(sent[1].subarray(-5).toString('hex')).toBe('000000ffff');
    const inflated = await throughZlib(createInflate({ dictionary: SPDY3_DICTIONARY, flush: constants.Z_SYNC_FLUSH }), sent);
    expect(inflated).toEqual(blocks);
    // Without the dictionary, zlib refuses the stream.
    await expect(throughZlib(createInflate({ flush: constants.Z_SYNC_FLUSH }), sent.slice(0, 1))).rejects.toThrow(/dictionary/i);
  });

  it('a block larger than one stored deflate block (64 KiB) still round-trips', async () => {
    const big = encodeHeaderBlock([['x-big', 'v'.repeat(150_000)]]);
    const d = new HeaderDecompressor();
    expect((await d.decompress(new HeaderCompressor().compress(big))).equals(big)).toBe(true);
    d.close();
  });

  it('the decompressor reads real zlib compression (level 9, sync flush) across blocks, as spdystream sends it', async () => {
    const deflate = createDeflate({ dictionary: SPDY3_DICTIONARY, level: 9, flush: constants.Z_SYNC_FLUSH });
    const compressed = await throughZlib(deflate, blocks);
    // Later blocks refer back to earlier ones: far smaller than the plain blocks.
    expect(compressed[4].length).toBeLessThan(blocks[4].length);
    const d = new HeaderDecompressor();
    const plain = await Promise.all(compressed.map((b) => d.decompress(b)));
    expect(plain.map((b) => decodeHeaderBlock(b).get('streamtype'))).toEqual(['error', 'stdin', 'stdout', 'stderr', 'resize']);
    // Out of order, the shared context is wrong: the blocks only make sense in sequence.
    const d2 = new HeaderDecompressor();
    await expect(d2.decompress(compressed[1])).rejects.toThrow(/SPDY header block/);
    d.close();
    d2.close();
  });
});
