import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GC_POLICY,
  podUidOfLogDirectory,
  selectContainers,
  selectLogDirectories,
  selectSandboxes,
  type GcInput,
} from '../../src/main/kubelet/container-gc-select.js';
import type { GcContainer, GcSandbox } from '../../src/workers/protocol/gc-wire.js';

const NOW = 1_700_000_000_000;
const ns = (msAgo: number) => BigInt(NOW - msAgo) * 1_000_000n;

const ctr = (id: string, uid: string, name: string, msAgo: number, running = false, sandboxId = `sb-${uid}`): GcContainer => ({
  id,
  uid,
  name,
  sandboxId,
  running,
  createdAt: ns(msAgo),
});
const sb = (id: string, uid: string, msAgo: number, ready = false): GcSandbox => ({ id, uid, ready, createdAt: ns(msAgo) });

const input = (over: Partial<GcInput> = {}): GcInput => ({
  policy: DEFAULT_GC_POLICY,
  allSourcesReady: true,
  removable: (uid) => uid.startsWith('gone'),
  now: NOW,
  ...over,
});

describe('container GC: containers (upstream evictContainers)', () => {
  const cases: { name: string; containers: GcContainer[]; input?: Partial<GcInput>; removed: string[] }[] = [
    {
      name: 'keeps the newest dead instance per (pod, container); running ones are never touched',
      containers: [
        ctr('a3', 'p1', 'app', 1000, true),
        ctr('a2', 'p1', 'app', 2000),
        ctr('a1', 'p1', 'app', 3000),
        ctr('a0', 'p1', 'app', 4000),
      ],
      removed: ['a0', 'a1'],
    },
    {
      name: 'a deleted pod loses every dead container, oldest first',
      containers: [ctr('g2', 'gone1', 'app', 1000), ctr('g1', 'gone1', 'app', 2000), ctr('h1', 'gone1', 'side', 500)],
      removed: ['g1', 'g2', 'h1'],
    },
    {
      name: 'before all sources are ready, a deleted pod keeps its newest dead container',
      containers: [ctr('g2', 'gone1', 'app', 1000), ctr('g1', 'gone1', 'app', 2000)],
      input: { allSourcesReady: false },
      removed: ['g1'],
    },
    {
      name: 'minAge: younger dead containers stay',
      containers: [
        ctr('n2', 'p1', 'app', 10),
        ctr('n1', 'p1', 'app', 20),
        ctr('o1', 'p1', 'app', 120_000),
        ctr('o0', 'p1', 'app', 130_000),
      ],
      input: { policy: { ...DEFAULT_GC_POLICY, minAgeMs: 60_000 } },
      removed: ['o0'],
    },
    {
      name: 'maxContainers: an equal share per unit, then the oldest overall',
      containers: [
        ctr('x2', 'p1', 'a', 100),
        ctr('x1', 'p1', 'a', 200),
        ctr('y2', 'p2', 'b', 300),
        ctr('y1', 'p2', 'b', 400),
        ctr('z1', 'p3', 'c', 500),
      ],
      input: { policy: { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 2 } },
      removed: ['x1', 'y1', 'z1'],
    },
  ];
  it.each(cases)('$name', (c) => {
    expect(selectContainers(c.containers, input(c.input)).sort()).toEqual([...c.removed].sort());
  });
});

describe('container GC: sandboxes (upstream evictSandboxes)', () => {
  it('a live pod keeps its newest sandbox; older dead sandboxes without containers go', () => {
    const boxes = [sb('s3', 'p1', 100, true), sb('s2', 'p1', 200), sb('s1', 'p1', 300)];
    expect(selectSandboxes(boxes, [ctr('c1', 'p1', 'app', 250, false, 's2')], input()).sort()).toEqual(['s1']);
  });
  it('a live pod keeps its newest sandbox even when it is dead', () => {
    expect(selectSandboxes([sb('s2', 'p1', 100), sb('s1', 'p1', 300)], [], input())).toEqual(['s1']);
  });
  it('a deleted pod loses every sandbox that is not ready and empty', () => {
    const boxes = [sb('g2', 'gone1', 100), sb('g1', 'gone1', 300), sb('g0', 'gone1', 400, true)];
    expect(selectSandboxes(boxes, [], input()).sort()).toEqual(['g1', 'g2']);
  });
});

describe('container GC: pod log directories', () => {
  it('removes the directories of removable pods once all sources are ready', () => {
    const root = mkdtempSync(join(tmpdir(), 'kts-gc-'));
    try {
      for (const d of ['default_web-n1_p1', 'default_old_web-n1_gone7', 'kube-system_x_gone8']) mkdirSync(join(root, d));
      expect(podUidOfLogDirectory('default_old_web-n1_gone7')).toBe('gone7');
      expect(selectLogDirectories(root, input()).sort()).toEqual([
        join(root, 'default_old_web-n1_gone7'),
        join(root, 'kube-system_x_gone8'),
      ]);
      expect(selectLogDirectories(root, input({ allSourcesReady: false }))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
