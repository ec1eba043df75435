import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import type { Pod } from '../../src/api/pod.js';
import { checkAndUpdatePod, isAnnotationMapEqual, PodStorage } from '../../src/main/podconfig/pod-storage.js';
import type { PodOperation, PodUpdate } from '../../src/main/podconfig/types.js';
import { FakeClock } from '../fakes/fake-clock.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const pod = (uid: string, name = uid, ns = 'default'): Pod => ({
  metadata: { uid, name, namespace: ns, labels: { app: name }, annotations: { custom: 'x' } },
  spec: { containers: [{ name: 'c', image: 'img:1' }], restartPolicy: 'Always' },
  status: { phase: 'Pending' },
});

const mk = () => {
  const { logger, lines } = captureLogger();
  const events: string[] = [];
  const storage = new PodStorage({ clock: new FakeClock(), logger, recorder: (_p, _t, reason, msg) => events.push(`${reason}: ${msg}`) });
  return { storage, lines, events };
};

/** Compact view of deltas: ["REMOVE:a,b", "ADD:c"]. */
const view = (ups: PodUpdate[]) => ups.map((u) => `${u.op}:${u.pods.map((p) => p.metadata.uid).join(',')}`);
const set = (pods: Pod[]) => ({ op: 'SET' as PodOperation, pods });

describe('PodStorage.merge (SET)', () => {
  const cases: { name: string; mutate: (p: Pod) => void; expected: string[] }[] = [
    { name: 'unchanged → nothing', mutate: () => {}, expected: [] },
    { name: 'spec change → UPDATE', mutate: (p) => (p.spec.containers[0].image = 'img:2'), expected: ['UPDATE:a'] },
    { name: 'label change → UPDATE', mutate: (p) => (p.metadata.labels = { app: 'other' }), expected: ['UPDATE:a'] },
    { name: 'annotation change → UPDATE', mutate: (p) => (p.metadata.annotations = { custom: 'y' }), expected: ['UPDATE:a'] },
    {
      name: 'local annotations only → nothing',
      mutate: (p) => (p.metadata.annotations = { custom: 'x', 'kubernetes.io/config.seen': 'later', 'kubernetes.io/config.mirror': 'm' }),
      expected: [],
    },
    { name: 'deletionTimestamp → DELETE', mutate: (p) => (p.metadata.deletionTimestamp = '2024-01-01T00:00:00Z'), expected: ['DELETE:a'] },
    {
      name: 'deletionGracePeriodSeconds alone → UPDATE',
      mutate: (p) => (p.metadata.deletionGracePeriodSeconds = 5),
      expected: ['UPDATE:a'],
    },
    { name: 'status only → RECONCILE', mutate: (p) => (p.status = { phase: 'Running' }), expected: ['RECONCILE:a'] },
    { name: 'resourceVersion only → nothing', mutate: (p) => (p.metadata.resourceVersion = '7'), expected: [] },
  ];

  it.each(cases)('$name', ({ mutate, expected }) => {
    const { storage } = mk();
    storage.merge('api', set([pod('a'), pod('b')]));
    const changed = pod('a');
    mutate(changed);
    expect(view(storage.merge('api', set([changed, pod('b')])))).toEqual(expected);
  });

  it('new pod → ADD with config.source and config.seen', () => {
    const { storage } = mk();
    const [add] = storage.merge('file', set([pod('a')]));
    expect(add.op).toBe('ADD');
    expect(add.source).toBe('file');
    expect(add.pods[0].metadata.annotations).toMatchObject({
      'kubernetes.io/config.source': 'file',
      'kubernetes.io/config.seen': expect.any(String) as string,
    });
  });

  it('missing from SET → REMOVE', () => {
    const { storage } = mk();
    storage.merge('api', set([pod('a'), pod('b')]));
    expect(view(storage.merge('api', set([pod('b')])))).toEqual(['REMOVE:a']);
    expect(storage.size).toBe(1);
  });

  it('delivers removes, adds, updates, deletes, reconciles in that order', () => {
    const { storage } = mk();
    storage.merge('api', set([pod('r'), pod('u'), pod('d'), pod('s')]));
    const u = pod('u');
    u.spec.restartPolicy = 'Never';
    const d = pod('d');
    d.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    const s = pod('s');
    s.status = { phase: 'Running' };
    const out = storage.merge('api', set([s, d, u, pod('n')]));
    expect(view(out)).toEqual(['REMOVE:r', 'ADD:n', 'UPDATE:u', 'DELETE:d', 'RECONCILE:s']);
    expect(out.every((x) => x.source === 'api')).toBe(true);
  });

  // Regression (fault suite, apiserver outage): a status changed by someone else (the node controller's
  // Ready=False) kept the first resourceVersion, so the status sync took it for a copy older than its own
  // write and never wrote Ready back.
  it.each([
    { name: 'RECONCILE', mutate: (p: Pod) => (p.status = { phase: 'Running' }), op: 'RECONCILE' },
    { name: 'UPDATE', mutate: (p: Pod) => (p.spec.restartPolicy = 'Never'), op: 'UPDATE' },
  ])('a $name carries the resourceVersion of the new status', ({ mutate, op }) => {
    const { storage } = mk();
    const first = pod('a');
    first.metadata.resourceVersion = '10';
    storage.merge('api', set([first]));
    const next = pod('a');
    next.metadata.resourceVersion = '42';
    mutate(next);
    const [out] = storage.merge('api', set([next]));
    expect(out.op).toBe(op);
    expect(out.pods[0].metadata.resourceVersion).toBe('42');
  });

  it('keeps the first-seen time across updates', () => {
    const clock = new FakeClock();
    const storage = new PodStorage({ clock, logger: captureLogger().logger });
    const first = storage.merge('api', set([pod('a')]))[0].pods[0].metadata.annotations!['kubernetes.io/config.seen'];
    clock.step(5000);
    const changed = pod('a');
    changed.spec.restartPolicy = 'Never';
    const upd = storage.merge('api', set([changed]))[0];
    expect(upd.pods[0].metadata.annotations!['kubernetes.io/config.seen']).toBe(first);
  });

  it('returns copies: mutating a delivered pod does not change storage', () => {
    const { storage } = mk();
    const [add] = storage.merge('api', set([pod('a')]));
    add.pods[0].spec.restartPolicy = 'Never';
    expect(storage.merge('api', set([pod('a')]))).toEqual([]);
  });
});

describe('sources seen', () => {
  it('an empty first SET marks the source seen and sends an empty ADD', () => {
    const { storage } = mk();
    expect(storage.seenSources('file')).toBe(false);
    expect(storage.merge('file', set([]))).toEqual([{ op: 'ADD', pods: [], source: 'file' }]);
    expect(storage.seenSources('file')).toBe(true);
    expect(storage.merge('file', set([]))).toEqual([]);
  });

  it('seenSources needs every named source; incremental ops do not mark seen', () => {
    const { storage } = mk();
    storage.merge('api', { op: 'ADD', pods: [pod('a')] });
    expect(storage.seenSources('api')).toBe(false);
    storage.merge('file', set([pod('b')]));
    expect(storage.seenSources('file')).toBe(true);
    expect(storage.seenSources('file', 'api')).toBe(false);
    storage.merge('api', set([pod('a')]));
    expect(storage.seenSources('file', 'api')).toBe(true);
  });

  it('a first SET with only removes still sends the readiness ADD', () => {
    const { storage } = mk();
    storage.merge('api', { op: 'ADD', pods: [pod('a')] });
    expect(view(storage.merge('api', set([])))).toEqual(['REMOVE:a', 'ADD:']);
  });
});

describe('incremental ops', () => {
  it('ADD, UPDATE, DELETE, REMOVE from a source', () => {
    const { storage } = mk();
    expect(view(storage.merge('api', { op: 'ADD', pods: [pod('a'), pod('b')] }))).toEqual(['ADD:a,b']);
    const a = pod('a');
    a.spec.restartPolicy = 'OnFailure';
    expect(view(storage.merge('api', { op: 'UPDATE', pods: [a] }))).toEqual(['UPDATE:a']);
    const b = pod('b');
    b.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    expect(view(storage.merge('api', { op: 'DELETE', pods: [b] }))).toEqual(['DELETE:b']);
    expect(view(storage.merge('api', { op: 'REMOVE', pods: [pod('b'), pod('zz')] }))).toEqual(['REMOVE:b']);
    expect(storage.mergedState().map((p) => p.metadata.uid)).toEqual(['a']);
  });

  it('an ADD of an already-known pod is treated as an update check', () => {
    const { storage } = mk();
    storage.merge('api', { op: 'ADD', pods: [pod('a')] });
    expect(storage.merge('api', { op: 'ADD', pods: [pod('a')] })).toEqual([]);
  });
});

describe('duplicates', () => {
  it('drops the later pod with the same full name in one SET, with an error log and event', () => {
    const { storage, lines, events } = mk();
    const out = storage.merge('file', set([pod('a', 'web'), pod('b', 'web')]));
    expect(view(out)).toEqual(['ADD:a']);
    expect(lines.some((l) => l['level'] === 50 && String(l['msg']).includes('duplicate pod name') && l['uid'] === 'b')).toBe(true);
    expect(events[0]).toMatch(/^FailedValidation: Error validating pod web from file due to duplicate pod name "web"/);
  });

  it('the same name in different namespaces is not a duplicate', () => {
    const { storage } = mk();
    expect(view(storage.merge('file', set([pod('a', 'web', 'x'), pod('b', 'web', 'y')])))).toEqual(['ADD:a,b']);
  });

  it('drops a repeated UID in one update', () => {
    const { storage } = mk();
    expect(view(storage.merge('api', { op: 'ADD', pods: [pod('a', 'one'), pod('a', 'two')] }))).toEqual(['ADD:a']);
  });

  it('across sources the earlier holder wins and the later pod is admitted once the name is free', () => {
    const { storage, lines } = mk();
    storage.merge('file', set([pod('f', 'web')]));
    expect(view(storage.merge('http', set([pod('h', 'web'), pod('x')])))).toEqual(['ADD:x']);
    expect(lines.some((l) => l['level'] === 50 && l['source'] === 'http' && l['uid'] === 'h')).toBe(true);
    const out = storage.merge('file', set([]));
    expect(out.map((u) => `${u.source}/${view([u])[0]}`)).toEqual(['file/REMOVE:f', 'http/ADD:h']);
    expect(view(storage.merge('http', set([pod('h', 'web'), pod('x')])))).toEqual([]);
  });

  it('a shadowed pod no longer sent by its source is not admitted later', () => {
    const { storage } = mk();
    storage.merge('file', set([pod('f', 'web')]));
    storage.merge('http', set([pod('h', 'web')]));
    storage.merge('http', set([]));
    expect(view(storage.merge('file', set([])))).toEqual(['REMOVE:f']);
  });

  it('mirror pods from the api source do not conflict with their static pod', () => {
    const { storage } = mk();
    storage.merge('file', set([pod('static', 'web')]));
    const mirror = pod('mirror', 'web');
    mirror.metadata.annotations = { 'kubernetes.io/config.mirror': 'hash' };
    expect(view(storage.merge('api', set([mirror])))).toEqual(['ADD:mirror']);
  });
});

describe('helpers', () => {
  it('isAnnotationMapEqual ignores local keys and treats missing as empty', () => {
    expect(isAnnotationMapEqual(undefined, { 'kubernetes.io/config.source': 'file' })).toBe(true);
    expect(isAnnotationMapEqual({ a: '1' }, {})).toBe(false);
    expect(isAnnotationMapEqual({ a: '1', 'kubernetes.io/config.seen': 't' }, { a: '1' })).toBe(true);
    expect(isAnnotationMapEqual({ 'kubernetes.io/config.hash': '1' }, { 'kubernetes.io/config.hash': '2' })).toBe(false);
  });

  it('checkAndUpdatePod keeps local annotations of the stored pod', () => {
    const existing = pod('a');
    existing.metadata.annotations = { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.seen': 't0', old: '1' };
    const ref = pod('a');
    ref.metadata.annotations = { 'kubernetes.io/config.seen': 't1', new: '2' };
    expect(checkAndUpdatePod(existing, ref)).toEqual({ needUpdate: true, needReconcile: false, needGracefulDelete: false });
    expect(existing.metadata.annotations).toEqual({ 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.seen': 't0', new: '2' });
  });
});
