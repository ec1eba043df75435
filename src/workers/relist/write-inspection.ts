/**
 * An inspection's status goes into the pod's cache entry. It is as of its
 * relist's lists (its timestamp), and a sync may have written the entry since
 * (src/workers/sync/publish-status.ts: the sandbox or containers it just
 * created). Upstream's cache.Set replaces the entry, the generic PLEG being
 * its only writer; replacing here would drop a container the sync started and
 * reported running after the lists were taken, and the pod's next status
 * would show it vanished (a restart and ContainerStatusUnknown) until a later
 * relist lists it and the pod syncs again, which at a node's boot waits
 * behind every other pod's first sync.
 *
 * So an entry newer than the inspection keeps, on top of the inspection's
 * status, what the lists could not have shown: a sandbox or container
 * created after them (what the lists missed that was created before them is
 * gone, and goes), and a container it shows in a later state (a state only
 * moves created → running → exited). The timestamp stays the inspection's:
 * the rest of the entry is as of its lists.
 */
import { newestFirst } from '../../runtime/convert.js';
import { CONTAINER_STATE_RANK, type PodStatus } from '../../runtime/types.js';
import type { PodStatusCache } from '../shared/pod-status-cache.js';

/** Compare-and-write attempts before the inspection is written over whatever won. */
const ATTEMPTS = 3;

export function writeInspection(cache: PodStatusCache, slot: number, status: PodStatus): void {
  for (let attempt = 1; ; attempt++) {
    const ts = cache.readTimestamp(slot);
    const entry = ts > status.timestamp ? cache.read(slot, status.uid) : undefined;
    const next = entry ? withLaterObjects(status, entry) : status;
    // NaN: no status yet. A write that lands meanwhile makes this one merge again on it.
    const unless = Number.isNaN(ts) ? status.timestamp : Math.max(ts, status.timestamp);
    if (cache.write(slot, next, attempt < ATTEMPTS ? { ifNoNewerThan: unless } : {})) return;
  }
}

/** `status` with what `entry` (written after it was listed) has that its lists could not show. */
export function withLaterObjects(status: PodStatus, entry: PodStatus): PodStatus {
  // The lists were taken after the timestamp: what they miss that was created before it was removed.
  const listedNs = BigInt(Math.floor(status.timestamp)) * 1_000_000n;
  const sandboxIds = new Set(status.sandboxStatuses.map((s) => s.id));
  const laterSandboxes = entry.sandboxStatuses.filter((s) => !sandboxIds.has(s.id) && s.createdAt > listedNs);
  const containerIds = new Set(status.containerStatuses.map((s) => s.id));
  const laterContainers = entry.containerStatuses.filter((s) => !containerIds.has(s.id) && s.createdAt > listedNs);
  const entryById = new Map(entry.containerStatuses.map((s) => [s.id, s]));
  let advanced = false;
  const containers = status.containerStatuses.map((s) => {
    const seen = entryById.get(s.id);
    if (!seen || CONTAINER_STATE_RANK[seen.state] <= CONTAINER_STATE_RANK[s.state]) return s;
    advanced = true;
    return seen;
  });
  if (laterSandboxes.length === 0 && laterContainers.length === 0 && !advanced) return status;
  const sandboxStatuses = [...laterSandboxes, ...status.sandboxStatuses].sort(newestFirst);
  const ready = sandboxStatuses.find((s) => s.state === 'ready');
  return {
    ...status,
    ips: ready ? ready.ips : [],
    sandboxStatuses,
    containerStatuses: [...laterContainers, ...containers].sort(newestFirst),
  };
}
