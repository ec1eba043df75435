/**
 * Upstream GenericPLEG event generation over the relist record table.
 * Sandboxes count as containers (ready ≙ running, notready ≙ exited), and
 * "created" maps to unknown, as upstream's convertState does. Events carry
 * the record key (the id's 16-hex-digit prefix) in `data`; the PLEG resolves
 * keys to full ids from the inspected status where it needs them.
 *
 * Assumption (upstream's too): a container is not created, run, died and
 * removed within one relist period; such a container produces no events.
 */
import type { PlegEvent } from '../../runtime/pleg-event.js';
import type { RelistRecordTable } from '../../shared/relist-records.js';

type PlegState = 'running' | 'exited' | 'unknown' | 'non-existent';

function fromContainer(s: string): PlegState {
  switch (s) {
    case 'running':
      return 'running';
    case 'exited':
      return 'exited';
    case 'non-existent':
      return 'non-existent';
    default:
      return 'unknown';
  }
}

function fromSandbox(s: string): PlegState {
  return s === 'ready' ? 'running' : s === 'notready' ? 'exited' : 'non-existent';
}

/** upstream generateEvents(podID, cid, oldState, newState) */
export function generateEvents(uid: string, data: string, oldState: PlegState, newState: PlegState, out: PlegEvent[]): void {
  if (oldState === newState) return;
  switch (newState) {
    case 'running':
      out.push({ id: uid, type: 'ContainerStarted', data });
      return;
    case 'exited':
      out.push({ id: uid, type: 'ContainerDied', data });
      return;
    case 'unknown':
      out.push({ id: uid, type: 'ContainerChanged', data });
      return;
    case 'non-existent':
      if (oldState !== 'exited') out.push({ id: uid, type: 'ContainerDied', data });
      out.push({ id: uid, type: 'ContainerRemoved', data });
      return;
  }
}

/** Events for record table slots [fromSlot, toSlot). */
export function diffSlots(records: RelistRecordTable, fromSlot: number, toSlot: number): PlegEvent[] {
  const out: PlegEvent[] = [];
  const end = Math.min(toSlot, records.slotCount());
  for (let slot = Math.max(0, fromSlot); slot < end; slot++) {
    if (!records.slotChanged(slot)) continue;
    const d = records.diffSlot(slot); // undefined for a free slot
    if (!d) continue;
    for (const s of d.sandboxes) generateEvents(d.uid, s.key, fromSandbox(s.old), fromSandbox(s.new), out);
    for (const c of d.containers) generateEvents(d.uid, c.key, fromContainer(c.old), fromContainer(c.new), out);
  }
  return out;
}
