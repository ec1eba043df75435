import { describe, expect, it } from 'vitest';
import type { RuntimePod } from '../../src/runtime/types.js';
import { relist } from '../../src/workers/relist/relist.js';
import { RelistRecordTable } from '../../src/shared/relist-records.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

const id = (n: number) => n.toString(16).padStart(64, '0');

function pod(uid: string, containers: number): RuntimePod {
  return {
    uid,
    name: `pod-${uid.slice(0, 8)}`,
    namespace: 'default',
    sandboxes: [{ id: id(uid.length), state: 'ready', createdAt: 1n }],
    containers: Array.from({ length: containers }, (_, i) => ({
      id: `${uid}-${i}`,
      name: `c${i}`,
      state: 'running' as const,
      hash: 'h',
      createdAt: 2n,
      sandboxId: id(uid.length),
    })),
  };
}

describe('relist (one generation of the record table)', () => {
  it('records a pod of any size, and leaves out only a pod the table cannot hold, reporting it', async () => {
    const runtime = new FakeRuntime();
    const records = RelistRecordTable.create({ capacity: 4, maxContainersPerPod: 2, extentBytes: 64 * 1024 });
    const tooLong = 'u'.repeat(65); // a slot holds a uid of at most 64 bytes
    runtime.pods = [pod('small', 1), pod('large', 300), pod(tooLong, 1), pod('huge', 5000)];
    const summary = await relist({ runtime, records });
    expect(summary.skipped.map((s) => [s.uid, s.name])).toEqual([
      [tooLong, `pod-${tooLong.slice(0, 8)}`],
      ['huge', 'pod-huge'],
    ]);
    expect(summary.skipped[0].reason).toMatch(/is 65 UTF-8 bytes/);
    expect(summary.skipped[1].reason).toMatch(/relist records of pod huge \(5000 containers, 1 sandboxes\)/);
    expect(summary.newPods.map((p) => p.uid)).toEqual(['small', 'large']);
    // Its 300 containers and its sandbox (upstream reports a sandbox as a container).
    expect(summary.events.filter((e) => e.id === 'large' && e.type === 'ContainerStarted')).toHaveLength(301);
    expect(records.records(records.slotOf('small')!, 'new').present).toBe(true);
  });
});
