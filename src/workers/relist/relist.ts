/**
 * One relist (upstream GenericPLEG.relist up to the events): list, decode
 * and group the runtime's pods, write their records as the next generation,
 * and diff it against the previous one. A failed list leaves the committed
 * generation untouched; a pod the record table cannot hold is left out of the
 * generation and reported, and never fails the relist of the others. The relist loop (relist-loop.ts) runs it in a worker,
 * or on the main thread in inline mode.
 */
import { CapacityError } from '../../common/errors.js';
import type { Runtime } from '../../runtime/runtime.js';
import { diffSlots } from './pleg-diff.js';
import type { RelistSummary } from '../protocol/protocol.js';
import type { RelistRecordTable } from '../../shared/relist-records.js';

export async function relist(ctx: { runtime: Runtime; records: RelistRecordTable }): Promise<RelistSummary> {
  const t0 = performance.now();
  const pods = await ctx.runtime.getPods();
  const t1 = performance.now();
  const { records } = ctx;
  records.beginGeneration();
  const newPods: RelistSummary['newPods'] = [];
  const skipped: RelistSummary['skipped'] = [];
  const containersByState = { created: 0, running: 0, exited: 0, unknown: 0 };
  let runningPods = 0;
  try {
    for (const p of pods) {
      const isNew = records.slotOf(p.uid) === undefined;
      try {
        records.putPod(p.uid, p.sandboxes, p.containers);
      } catch (err) {
        if (!(err instanceof CapacityError)) throw err;
        skipped.push({ uid: p.uid, name: p.name, namespace: p.namespace, reason: err.message });
        continue;
      }
      if (isNew) newPods.push({ uid: p.uid, name: p.name, namespace: p.namespace });
      if (p.sandboxes.some((s) => s.state === 'ready')) runningPods++;
      for (const c of p.containers) containersByState[c.state]++;
    }
    records.commitGeneration();
  } catch (err) {
    records.abortGeneration();
    throw err;
  }
  const t2 = performance.now();
  const events = diffSlots(records, 0, records.slotCount());
  const known: RelistSummary['known'] = {};
  if (events.length > 0) {
    const changed = new Set(events.map((e) => e.id));
    for (const p of pods) {
      if (!changed.has(p.uid)) continue;
      known[p.uid] = {
        sandboxes: p.sandboxes.map((s) => ({ id: s.id, state: s.state })),
        containers: p.containers.map((c) => ({ id: c.id, sandboxId: c.sandboxId, state: c.state })),
      };
    }
  }
  const t3 = performance.now();
  return {
    podCount: pods.length,
    newPods,
    runningPods,
    containersByState,
    slotCount: records.slotCount(),
    skipped,
    events,
    known,
    timings: { listMs: t1 - t0, recordsMs: t2 - t1, diffMs: t3 - t2, workerMs: t3 - t0 },
  };
}
