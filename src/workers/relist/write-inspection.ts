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
 * gone, and goes), and a sandbox or container it shows in a later state (a
 * state only moves: ready → notready, created → running → exited). The
 * timestamp stays the inspection's: the rest of the entry is as of its lists.
 * The pod counts as gone (its slot freed) only if what was written is empty.
 */
import { withLaterStates } from '../../runtime/convert.js';
import { CONTAINER_STATE_RANK, type PodStatus } from '../../runtime/types.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';

/** Compare-and-write attempts before the inspection is written over whatever won. */
const ATTEMPTS = 3;

/** Writes the inspection's `status` into `slot` (see the module comment); returns the status written. */
export function writeInspection(cache: PodStatusCache, slot: number, status: PodStatus): PodStatus {
  for (let attempt = 1; ; attempt++) {
    const ts = cache.readTimestamp(slot);
    const entry = ts > status.timestamp ? cache.read(slot, status.uid) : undefined;
    const next = entry ? withLaterObjects(status, entry) : status;
    // NaN: no status yet. A write that lands meanwhile makes this one merge again on it.
    const unless = Number.isNaN(ts) ? status.timestamp : Math.max(ts, status.timestamp);
    if (cache.write(slot, next, attempt < ATTEMPTS ? { ifNoNewerThan: unless } : {})) return next;
  }
}

/** `status` with what `entry` (written after it was listed) has that its lists could not show. */
function withLaterObjects(status: PodStatus, entry: PodStatus): PodStatus {
  // The lists were taken after the timestamp: what they miss that was created before it was removed.
  const listedNs = BigInt(Math.floor(status.timestamp)) * 1_000_000n;
  const sandboxes = withLaterStates(status.sandboxStatuses, entry.sandboxStatuses, (s) => (s.state === 'ready' ? 0 : 1), listedNs);
  const containers = withLaterStates(status.containerStatuses, entry.containerStatuses, (s) => CONTAINER_STATE_RANK[s.state], listedNs);
  if (!sandboxes && !containers) return status;
  const sandboxStatuses = sandboxes ?? status.sandboxStatuses;
  const ready = sandboxStatuses.find((s) => s.state === 'ready');
  return {
    ...status,
    ips: ready ? ready.ips : [],
    sandboxStatuses,
    containerStatuses: containers ?? status.containerStatuses,
  };
}
