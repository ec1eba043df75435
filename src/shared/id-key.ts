/**
 * 64-bit keys of CRI container and sandbox ids, as stored in the relist
 * record table.
 *
 * For ids that start with 16 hex digits (containerd and CRI-O ids are 64
 * random hex digits) the key is those 16 digits, so `idKey(id)` is the id's
 * lowercase prefix. We assume no two live ids of one pod share a 64-bit
 * prefix (probability ~n²/2⁶⁵ for n ids). Other ids (fakes, tests) are hashed
 * with FNV-1a 64, which is not collision resistant against chosen input.
 */

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[97 + i] = 10 + i;
  HEX[65 + i] = 10 + i;
}

/** Writes the 64-bit key of `id` into out[0] (high) and out[1] (low). See the module doc. */
export function idKeyInto(id: string, out: Uint32Array | number[]): void {
  if (id.length >= 16) {
    let hi = 0;
    let lo = 0;
    let i = 0;
    for (; i < 16; i++) {
      const c = id.charCodeAt(i);
      const d = c < 128 ? HEX[c] : -1;
      if (d < 0) break;
      if (i < 8) hi = (hi << 4) | d;
      else lo = (lo << 4) | d;
    }
    if (i === 16) {
      out[0] = hi >>> 0;
      out[1] = lo >>> 0;
      return;
    }
  }
  // FNV-1a 64 over the UTF-16 code units (low byte, then high byte if non-zero), in 16-bit limbs:
  // offset basis 0xcbf29ce484222325; h * 0x100000001b3 = h * 0x1b3 + (h << 40) mod 2^64.
  let h0 = 0x2325,
    h1 = 0x8422,
    h2 = 0x9ce4,
    h3 = 0xcbf2;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    let b = c & 0xff;
    let more = c >>> 8;
    for (;;) {
      h0 ^= b;
      const t0 = h0 * 0x1b3;
      const c1 = h1 * 0x1b3 + (t0 >>> 16);
      const c2 = h2 * 0x1b3 + (c1 >>> 16) + (h0 << 8);
      const c3 = h3 * 0x1b3 + (c2 >>> 16) + (h1 << 8);
      h0 = t0 & 0xffff;
      h1 = c1 & 0xffff;
      h2 = c2 & 0xffff;
      h3 = c3 & 0xffff;
      if (more === 0) break;
      b = more;
      more = 0;
    }
  }
  out[0] = ((h3 << 16) | h2) >>> 0;
  out[1] = ((h1 << 16) | h0) >>> 0;
}

/** The 64-bit key of `id` as 16 lowercase hex digits (the id's prefix for hex ids). */
export function idKey(id: string): string {
  const k = [0, 0];
  idKeyInto(id, k);
  return keyString(k[0], k[1]);
}

export function keyString(hi: number, lo: number): string {
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}
