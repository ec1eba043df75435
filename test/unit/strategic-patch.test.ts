import { describe, expect, it } from 'vitest';
import { twoWayMergePatch, type PatchSchema } from '../../src/main/apiserver/strategic-patch.js';
import { applyStrategicPatch } from '../fakes/strategic-merge.js';

// Expected patches are what apimachinery's CreateTwoWayMergePatch returns for the
// JSON of the same two objects (diffMaps / diffListsOfMaps / diffLists in
// strategicpatch/patch.go): a removed key is null; a merge-key list sends each
// added element whole, each changed element as the recursive diff of the two
// elements plus its merge key, a delete directive per removed element (after the
// others), and $setElementOrder when anything changed or the order did; a list
// that was empty before is sent whole without an order; lists without a merge
// key are atomic. Go's omitempty makes an empty list the same as a missing one.

type Json = Record<string, unknown>;
const SCHEMA: PatchSchema = {
  mergeKeys: { 'status.conditions': 'type', 'status.podIPs': 'ip' },
  replaceLists: ['status.addresses'],
};
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:00:10Z';
const cond = (type: string, status = 'False', extra: Json = {}) => ({ type, status, lastTransitionTime: T0, ...extra });
const order = (...types: string[]) => types.map((type) => ({ type }));
const cs = (name: string, ready = false) => ({ name, ready, restartCount: 0, image: `${name}:1`, imageID: '' });

interface Case {
  name: string;
  before: Json | undefined;
  after: Json | undefined;
  expected: Json | undefined;
}

const cases: Case[] = [
  { name: 'equal documents', before: { status: { phase: 'Running' } }, after: { status: { phase: 'Running' } }, expected: undefined },
  {
    name: 'a changed scalar',
    before: { status: { phase: 'Pending', hostIP: '10.0.0.1' } },
    after: { status: { phase: 'Running', hostIP: '10.0.0.1' } },
    expected: { status: { phase: 'Running' } },
  },
  {
    name: 'an added field',
    before: { status: { phase: 'Pending' } },
    after: { status: { phase: 'Pending', podIP: '10.1.0.5' } },
    expected: { status: { podIP: '10.1.0.5' } },
  },
  {
    name: 'a removed key is null',
    before: { status: { phase: 'Failed', reason: 'OutOfpods', message: 'no room' } },
    after: { status: { phase: 'Failed' } },
    expected: { status: { reason: null, message: null } },
  },
  {
    name: 'a nested map sends only its changed keys',
    before: { metadata: { labels: { a: '1', b: '2', c: '3' } }, status: { phase: 'Running' } },
    after: { metadata: { labels: { a: '1', b: '20', d: '4' } }, status: { phase: 'Running' } },
    expected: { metadata: { labels: { b: '20', c: null, d: '4' } } },
  },
  {
    name: 'a map absent before is sent whole',
    before: { status: {} },
    after: { status: { startTime: T0, qosClass: 'BestEffort' } },
    expected: { status: { startTime: T0, qosClass: 'BestEffort' } },
  },
  {
    name: 'a field that changes type is sent whole',
    before: { status: { extra: 'text' } },
    after: { status: { extra: { nested: 1 } } },
    expected: { status: { extra: { nested: 1 } } },
  },
  {
    name: 'an atomic list with one changed element is sent whole',
    before: { status: { containerStatuses: [cs('a'), cs('b')] } },
    after: { status: { containerStatuses: [cs('a', true), cs('b')] } },
    expected: { status: { containerStatuses: [cs('a', true), cs('b')] } },
  },
  {
    name: 'an atomic list in another order is sent whole',
    before: { status: { containerStatuses: [cs('a'), cs('b')] } },
    after: { status: { containerStatuses: [cs('b'), cs('a')] } },
    expected: { status: { containerStatuses: [cs('b'), cs('a')] } },
  },
  {
    name: 'an atomic list that went away is null',
    before: { status: { phase: 'Pending', containerStatuses: [cs('a')] } },
    after: { status: { phase: 'Pending' } },
    expected: { status: { containerStatuses: null } },
  },
  {
    name: 'a list at a path without a merge key is atomic',
    before: { spec: { conditions: [cond('A'), cond('B')] } },
    after: { spec: { conditions: [cond('A', 'True'), cond('B')] } },
    expected: { spec: { conditions: [cond('A', 'True'), cond('B')] } },
  },
  {
    name: 'merge list: an added element is sent whole, with the order',
    before: { status: { conditions: [cond('PodScheduled', 'True')] } },
    after: { status: { conditions: [cond('PodScheduled', 'True'), cond('Ready')] } },
    expected: { status: { conditions: [cond('Ready')], '$setElementOrder/conditions': order('PodScheduled', 'Ready') } },
  },
  {
    name: 'merge list: a removed element is a delete directive',
    before: { status: { conditions: [cond('PodScheduled', 'True'), cond('Ready')] } },
    after: { status: { conditions: [cond('PodScheduled', 'True')] } },
    expected: {
      status: { conditions: [{ type: 'Ready', $patch: 'delete' }], '$setElementOrder/conditions': order('PodScheduled') },
    },
  },
  {
    name: 'merge list: only the order changed',
    before: { status: { conditions: [cond('A'), cond('B')] } },
    after: { status: { conditions: [cond('B'), cond('A')] } },
    expected: { status: { '$setElementOrder/conditions': order('B', 'A') } },
  },
  {
    name: 'merge list: a changed element sends its changed fields and the merge key',
    before: { status: { conditions: [cond('PodScheduled', 'True'), cond('Ready', 'False', { message: 'm' })] } },
    after: {
      status: { conditions: [cond('PodScheduled', 'True'), cond('Ready', 'True', { message: 'm', lastTransitionTime: T1 })] },
    },
    expected: {
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }],
        '$setElementOrder/conditions': order('PodScheduled', 'Ready'),
      },
    },
  },
  {
    // ContainersReady False (reason ContainersNotReady, message) → True without either.
    name: 'merge list: a field removed from an element is null in that element',
    before: { status: { conditions: [cond('ContainersReady', 'False', { reason: 'ContainersNotReady', message: 'unready: [c]' })] } },
    after: { status: { conditions: [cond('ContainersReady', 'True')] } },
    expected: {
      status: {
        conditions: [{ type: 'ContainersReady', status: 'True', reason: null, message: null }],
        '$setElementOrder/conditions': order('ContainersReady'),
      },
    },
  },
  {
    name: 'merge list: added and removed elements, deletions last',
    before: { status: { conditions: [cond('A'), cond('B')] } },
    after: { status: { conditions: [cond('C'), cond('A')] } },
    expected: {
      status: { conditions: [cond('C'), { type: 'B', $patch: 'delete' }], '$setElementOrder/conditions': order('C', 'A') },
    },
  },
  {
    name: 'merge list: nothing before, so the list is sent whole without an order',
    before: { status: { phase: 'Pending' } },
    after: { status: { phase: 'Pending', podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }] } },
    expected: { status: { podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }] } },
  },
  {
    name: 'merge list: an empty list before counts as none (omitempty)',
    before: { status: { podIPs: [] } },
    after: { status: { podIPs: [{ ip: '10.1.0.5' }] } },
    expected: { status: { podIPs: [{ ip: '10.1.0.5' }] } },
  },
  {
    name: 'merge list: emptied is null (omitempty)',
    before: { status: { phase: 'Running', podIPs: [{ ip: '10.1.0.5' }] } },
    after: { status: { phase: 'Running', podIPs: [] } },
    expected: { status: { podIPs: null } },
  },
  {
    name: 'an empty list where none was is no change (omitempty)',
    before: { status: { phase: 'Running' } },
    after: { status: { phase: 'Running', containerStatuses: [], conditions: [] } },
    expected: undefined,
  },
  {
    name: 'a replace list that changed is sent whole with {$patch: replace}',
    before: { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } },
    after: { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.6' }] } },
    expected: { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.6' }, { $patch: 'replace' }] } },
  },
  {
    name: 'a replace list that did not change is not sent',
    before: { status: { phase: 'Running', addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } },
    after: { status: { phase: 'Succeeded', addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } },
    expected: { status: { phase: 'Succeeded' } },
  },
  {
    name: 'a replace list that went away is null',
    before: { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }], phase: 'Running' } },
    after: { status: { phase: 'Running' } },
    expected: { status: { addresses: null } },
  },
  {
    name: 'from nothing, everything is sent',
    before: undefined,
    after: { status: { phase: 'Pending', conditions: [cond('PodScheduled', 'True')] } },
    expected: { status: { phase: 'Pending', conditions: [cond('PodScheduled', 'True')] } },
  },
];

/** Go's omitempty for the lists the cases use: empty lists are dropped. */
const plain = (x: Json | undefined): Json =>
  JSON.parse(JSON.stringify(x ?? {}), (_k, v: unknown) => (Array.isArray(v) && v.length === 0 ? undefined : v)) as Json;

describe('twoWayMergePatch', () => {
  it.each(cases)('$name: the patch CreateTwoWayMergePatch makes', ({ before, after, expected }) => {
    expect(twoWayMergePatch(before, after, SCHEMA)).toEqual(expected);
  });

  it.each(cases.filter((c) => c.expected !== undefined))(
    '$name: the apiserver applying it yields the new document',
    ({ before, after }) => {
      const patch = twoWayMergePatch(before, after, SCHEMA)!;
      expect(patch).toBeDefined();
      expect(applyStrategicPatch(plain(before), patch, SCHEMA.mergeKeys)).toEqual(plain(after));
    },
  );

  it('several deletions all become delete directives after the changes (upstream sorts them by merge key)', () => {
    const before = { status: { conditions: [cond('Z'), cond('A'), cond('M')] } };
    const after = { status: { conditions: [cond('A'), cond('N')] } };
    const patch = twoWayMergePatch(before, after, SCHEMA) as { status: Json };
    const list = patch.status.conditions as Json[];
    expect(list[0]).toEqual(cond('N'));
    // Order of the directives has no effect on the result; upstream emits M then Z.
    expect(list.slice(1)).toEqual(
      expect.arrayContaining([
        { type: 'M', $patch: 'delete' },
        { type: 'Z', $patch: 'delete' },
      ]),
    );
    expect(list).toHaveLength(3);
    expect(patch.status['$setElementOrder/conditions']).toEqual(order('A', 'N'));
  });

  it('does not modify its inputs', () => {
    const before = { status: { conditions: [cond('A')], podIPs: [] as Json[] } };
    const after = { status: { conditions: [cond('A', 'True')], podIPs: [{ ip: '10.1.0.5' }] } };
    const copies = structuredClone([before, after]);
    twoWayMergePatch(before, after, SCHEMA);
    expect([before, after]).toEqual(copies);
  });
});
