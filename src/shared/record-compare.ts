/**
 * One record of the relist record table (relist-records.ts) and the
 * comparisons the PLEG makes of two generations' records. A record is
 * RECORD_WORDS Uint32 words: the id key's high and low 32 bits, then the
 * state code (0 = non-existent).
 */
import { keyString } from './id-key.js';

export const REC_HI = 0;
export const REC_LO = 1;
export const REC_STATE = 2;
export const RECORD_WORDS = 3;

export type RecordState<S extends string> = S | 'non-existent';

export interface RecordDiff<S extends string> {
  /** idKey of the id; use `idKey` on candidate ids to resolve. */
  key: string;
  old: RecordState<S>;
  new: RecordState<S>;
}

function findRecord(recs: Uint32Array, hi: number, lo: number): number {
  for (let r = 0; r < recs.length; r += RECORD_WORDS) {
    if (recs[r + REC_HI] === hi && recs[r + REC_LO] === lo) return r;
  }
  return -1;
}

/** The `aCount` records at word `a` and the `bCount` at word `b` of `u32` hold the same ids in the same states (in any order). */
export function sameRecordsAt(u32: Uint32Array, a: number, aCount: number, b: number, bCount: number): boolean {
  if (aCount !== bCount) return false;
  const aEnd = a + RECORD_WORDS * aCount;
  const bEnd = b + RECORD_WORDS * bCount;
  for (let r = b; r < bEnd; r += RECORD_WORDS) {
    let at = -1;
    for (let q = a; q < aEnd; q += RECORD_WORDS) {
      if (u32[q + REC_HI] === u32[r + REC_HI] && u32[q + REC_LO] === u32[r + REC_LO]) {
        at = q;
        break;
      }
    }
    if (at < 0 || u32[at + REC_STATE] !== u32[r + REC_STATE]) return false;
  }
  return true;
}

export function diffRecords<S extends string>(old: Uint32Array, cur: Uint32Array, names: readonly RecordState<S>[]): RecordDiff<S>[] {
  const out: RecordDiff<S>[] = [];
  const name = (code: number): RecordState<S> => names[code] ?? 'non-existent';
  for (let r = 0; r < old.length; r += RECORD_WORDS) {
    const at = findRecord(cur, old[r + REC_HI], old[r + REC_LO]);
    out.push({
      key: keyString(old[r + REC_HI], old[r + REC_LO]),
      old: name(old[r + REC_STATE]),
      new: at < 0 ? 'non-existent' : name(cur[at + REC_STATE]),
    });
  }
  for (let r = 0; r < cur.length; r += RECORD_WORDS) {
    if (findRecord(old, cur[r + REC_HI], cur[r + REC_LO]) >= 0) continue;
    out.push({ key: keyString(cur[r + REC_HI], cur[r + REC_LO]), old: 'non-existent', new: name(cur[r + REC_STATE]) });
  }
  return out;
}
