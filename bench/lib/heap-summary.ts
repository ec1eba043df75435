/**
 * Summarises a V8 .heapsnapshot: the total self size and the largest
 * groups of nodes by type and constructor name (what the heap holds).
 */
export interface HeapGroup {
  /** `type` for non-objects (code, string, hidden, …), `object:Name` for objects. */
  group: string;
  count: number;
  bytes: number;
}

export interface HeapSummary {
  totalBytes: number;
  nodes: number;
  top: HeapGroup[];
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export function summarizeHeapSnapshot(json: string, topN = 12): HeapSummary {
  const s = JSON.parse(json) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const typeNames = s.snapshot.meta.node_types[0];
  const groups = new Map<string, HeapGroup>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = typeNames[s.nodes[i + typeAt]];
    const bytes = s.nodes[i + sizeAt];
    total += bytes;
    const key = type === 'object' || type === 'closure' ? `${type}:${s.strings[s.nodes[i + nameAt]]}` : type;
    const g = groups.get(key) ?? { group: key, count: 0, bytes: 0 };
    g.count++;
    g.bytes += bytes;
    groups.set(key, g);
  }
  const top = [...groups.values()].sort((a, b) => b.bytes - a.bytes).slice(0, topN);
  return { totalBytes: total, nodes: s.nodes.length / width, top };
}
