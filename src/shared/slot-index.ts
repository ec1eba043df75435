/**
 * Rebuilds a uid → slot index and the free-slot list by scanning slots
 * (shared by the pod status cache and the relist record table, whose slots
 * carry their uid so any thread can rebuild the owner-side index).
 * Free slots are listed so that `pop()` hands out the lowest slot first.
 */
export function rebuildSlotIndex(
  capacity: number,
  uidAt: (slot: number) => string | undefined,
  index: Map<string, number>,
  freeSlots: number[],
): void {
  index.clear();
  freeSlots.length = 0;
  for (let s = capacity - 1; s >= 0; s--) {
    const uid = uidAt(s);
    if (uid === undefined) freeSlots.push(s);
    else index.set(uid, s);
  }
}
