/**
 * The decisions of image garbage collection (upstream
 * images/image_gc_manager.go), as pure functions over the image records:
 * which images were seen and used when (detectImages), whether the image
 * filesystem is over the high threshold and how much to free (GarbageCollect),
 * and in which order unused images may go (freeSpace). Carrying the removals
 * out is image-gc-manager.ts.
 *
 * Times are clock milliseconds; 0 is upstream's zero time (never used, or
 * present before the first detection, so old enough).
 */

export interface ImageGcPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
}

export interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
  /** The runtime asked for the image to be kept (CRI Image.pinned). */
  pinned: boolean;
}

export interface RuntimeImage {
  id: string;
  size: number;
  pinned: boolean;
}

/** Upstream NewImageGCManager's checks (the config validation also refuses low >= high unless high is 100). */
export function policyError(p: ImageGcPolicy): string | undefined {
  if (p.highThresholdPercent < 0 || p.highThresholdPercent > 100)
    return `invalid HighThresholdPercent ${p.highThresholdPercent}, must be in range [0-100]`;
  if (p.lowThresholdPercent < 0 || p.lowThresholdPercent > 100)
    return `invalid LowThresholdPercent ${p.lowThresholdPercent}, must be in range [0-100]`;
  if (p.lowThresholdPercent > p.highThresholdPercent)
    return `LowThresholdPercent ${p.lowThresholdPercent} can not be higher than HighThresholdPercent ${p.highThresholdPercent}`;
  return undefined;
}

/** Upstream StartGarbageCollection: a high threshold of 100 turns image GC off (detection still runs). */
export function gcDisabled(p: ImageGcPolicy): boolean {
  return p.highThresholdPercent === 100;
}

/**
 * Updates `records` from one look at the runtime (upstream detectImages):
 * a new image is recorded as first detected at `detectTime`, an image in use
 * gets lastUsed = `now`, sizes and pins are refreshed, and images gone from
 * the runtime are forgotten. Returns the ids of the images that were new.
 */
export function updateRecords(
  records: Map<string, ImageRecord>,
  images: readonly RuntimeImage[],
  inUse: ReadonlySet<string>,
  detectTime: number,
  now: number,
): string[] {
  const present = new Set<string>();
  const added: string[] = [];
  for (const image of images) {
    present.add(image.id);
    let record = records.get(image.id);
    if (!record) {
      record = { firstDetected: detectTime, lastUsed: 0, size: 0, pinned: false };
      records.set(image.id, record);
      added.push(image.id);
    }
    if (inUse.has(image.id)) record.lastUsed = now;
    record.size = image.size;
    record.pinned = image.pinned;
  }
  for (const id of records.keys()) if (!present.has(id)) records.delete(id);
  return added;
}

export interface FsFigures {
  capacityBytes: bigint;
  availableBytes: bigint;
}

export type UsageVerdict =
  { kind: 'invalid-capacity' } | { kind: 'under'; usagePercent: number } | { kind: 'over'; usagePercent: number; bytesToFree: number };

/**
 * Upstream GarbageCollect's arithmetic: usage is 100 − available×100/capacity
 * (integer division); at or over the high threshold, free down to the low one
 * (capacity × (100 − low) / 100 − available bytes). Available above capacity
 * counts as capacity.
 */
export function assessUsage(fs: FsFigures, p: ImageGcPolicy): UsageVerdict {
  const capacity = fs.capacityBytes;
  const available = fs.availableBytes > capacity ? capacity : fs.availableBytes;
  if (capacity === 0n) return { kind: 'invalid-capacity' };
  const usagePercent = 100 - Number((available * 100n) / capacity);
  if (usagePercent < p.highThresholdPercent) return { kind: 'under', usagePercent };
  const bytesToFree = (capacity * BigInt(100 - p.lowThresholdPercent)) / 100n - available;
  return { kind: 'over', usagePercent, bytesToFree: Number(bytesToFree) };
}

export interface Candidate extends ImageRecord {
  id: string;
}

/**
 * The images freeSpace may remove, in the order it tries them: not in use,
 * not pinned, not used at or after `freeTime`, and first detected at least
 * minAge before it; least recently used first, ties by first detection (then
 * by id, so the order is total).
 */
export function removalOrder(
  records: ReadonlyMap<string, ImageRecord>,
  inUse: ReadonlySet<string>,
  freeTime: number,
  minAgeMs: number,
): Candidate[] {
  const out: Candidate[] = [];
  for (const [id, r] of records) {
    if (inUse.has(id) || r.pinned) continue;
    if (r.lastUsed >= freeTime) continue;
    if (freeTime - r.firstDetected < minAgeMs) continue;
    out.push({ id, ...r });
  }
  return out.sort((a, b) => a.lastUsed - b.lastUsed || a.firstDetected - b.firstDetected || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
