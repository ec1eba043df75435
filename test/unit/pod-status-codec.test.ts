import { describe, expect, it } from 'vitest';
import { CapacityError } from '../../src/common/errors.js';
import type { ContainerStatus, PodStatus } from '../../src/runtime/types.js';
import { decodePodStatus, encodedPodStatusSize, encodePodStatus } from '../../src/shared/pod-status-codec.js';

const NS = 1_700_000_000_000_000_123n;

function container(over: Partial<ContainerStatus> = {}): ContainerStatus {
  return {
    id: 'a'.repeat(64),
    name: 'app',
    state: 'running',
    createdAt: NS,
    startedAt: NS + 1n,
    finishedAt: 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'docker.io/library/nginx:1.27',
    imageRef: 'sha256:' + 'b'.repeat(64),
    restartCount: 2,
    hash: '1a2b3c4d',
    sandboxId: 'c'.repeat(64),
    ...over,
  };
}

function podStatus(over: Partial<PodStatus> = {}): PodStatus {
  return {
    uid: '6f1c2a3e-8a55-4e3e-9f4c-1c7b0f3d2e11',
    name: 'web-0',
    namespace: 'default',
    ips: ['10.0.0.7', 'fd00::7'],
    sandboxStatuses: [
      { id: 'c'.repeat(64), state: 'ready', createdAt: NS, attempt: 1, ips: ['10.0.0.7'], hostNetwork: false },
      { id: 'd'.repeat(64), state: 'notready', createdAt: NS - 5n, attempt: 0, ips: [], hostNetwork: true },
    ],
    containerStatuses: [
      container(),
      container({ id: 'e'.repeat(64), name: 'sidecar', state: 'exited', exitCode: -137, reason: 'OOMKilled', finishedAt: NS + 99n }),
    ],
    timestamp: 1_700_000_000_123.5,
    ...over,
  };
}

function roundTrip(s: PodStatus): PodStatus {
  const buf = new Uint8Array(64 * 1024);
  const n = encodePodStatus(s, buf);
  expect(n).toBe(encodedPodStatusSize(s));
  return decodePodStatus(buf, n);
}

describe('pod status codec', () => {
  it('round-trips every field exactly', () => {
    const s = podStatus();
    expect(roundTrip(s)).toEqual(s);
  });

  it('keeps bigint nanoseconds exact beyond 2^53', () => {
    const s = podStatus();
    s.containerStatuses[0].createdAt = 1_700_000_000_000_000_123n;
    s.containerStatuses[0].finishedAt = -1n;
    const out = roundTrip(s);
    expect(out.containerStatuses[0].createdAt).toBe(1_700_000_000_000_000_123n);
    expect(out.containerStatuses[0].finishedAt).toBe(-1n);
    expect(out.sandboxStatuses[1].createdAt).toBe(NS - 5n);
  });

  it.each([
    [
      'all states',
      (s: PodStatus) => {
        s.containerStatuses = (['created', 'running', 'exited', 'unknown'] as const).map((state) => container({ state }));
      },
    ],
    [
      'empty pod',
      (s: PodStatus) => {
        s.ips = [];
        s.sandboxStatuses = [];
        s.containerStatuses = [];
      },
    ],
    [
      'unicode strings',
      (s: PodStatus) => {
        s.name = 'pödé-名前-🚀';
        s.containerStatuses[0].message = 'fehlgeschlagen: 文字化け 🙃 \u0000 end';
        s.containerStatuses[1].reason = 'Ünicode';
      },
    ],
    [
      'long message',
      (s: PodStatus) => {
        s.containerStatuses[0].message = 'x'.repeat(4096);
      },
    ],
    [
      'extreme numbers',
      (s: PodStatus) => {
        s.containerStatuses[0].exitCode = -2147483648;
        s.containerStatuses[0].restartCount = 4294967295;
        s.sandboxStatuses[0].attempt = 4294967295;
        s.timestamp = 0;
      },
    ],
  ])('round-trips %s', (_name, mutate) => {
    const s = podStatus();
    mutate(s);
    expect(roundTrip(s)).toEqual(s);
  });

  it('throws CapacityError naming the uid and sizes when the region is too small', () => {
    const s = podStatus();
    const need = encodedPodStatusSize(s);
    const err = (() => {
      try {
        encodePodStatus(s, new Uint8Array(need - 1));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(CapacityError);
    expect((err as CapacityError).code).toBe('KTS_ERR_CAPACITY');
    expect((err as Error).message).toContain(s.uid);
    expect((err as Error).message).toContain(`needs ${need} bytes`);
    expect((err as Error).message).toContain(`holds ${need - 1}`);
    expect(encodePodStatus(s, new Uint8Array(need))).toBe(need);
  });

  it('throws CapacityError when a non-ASCII string does not fit', () => {
    const s = podStatus();
    s.containerStatuses[1].message = 'é'.repeat(100);
    expect(() => encodePodStatus(s, new Uint8Array(encodedPodStatusSize(s) - 3))).toThrow(CapacityError);
  });

  it('throws CapacityError for a string longer than 65535 bytes', () => {
    const s = podStatus();
    s.containerStatuses[0].message = 'y'.repeat(70_000);
    expect(() => encodePodStatus(s, new Uint8Array(200_000))).toThrow(/container\.message exceeds 65535/);
  });

  it('fits exactly in encodedPodStatusSize bytes and not one fewer, for mixed-width strings', () => {
    const pieces = ['a', 'é', '€', '🚀', 'z'.repeat(15), 'ü'.repeat(16), ''];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const s = podStatus();
      const text = () => Array.from({ length: rnd(12) }, () => pieces[rnd(pieces.length)]).join('');
      s.name = text();
      s.containerStatuses[0].message = text();
      s.containerStatuses[1].reason = text();
      s.containerStatuses[1].sandboxId = text();
      const need = encodedPodStatusSize(s);
      expect(encodePodStatus(s, new Uint8Array(need))).toBe(need);
      const buf = new Uint8Array(need);
      encodePodStatus(s, buf);
      expect(decodePodStatus(buf)).toEqual(s);
      expect(() => encodePodStatus(s, new Uint8Array(need - 1))).toThrow(CapacityError);
    }
  });

  it('encodes into an offset view of a shared buffer', () => {
    const sab = new SharedArrayBuffer(8192);
    const region = new Uint8Array(sab, 1000, 4000);
    const s = podStatus();
    const n = encodePodStatus(s, region);
    expect(decodePodStatus(new Uint8Array(sab, 1000, n))).toEqual(s);
  });

  it('rejects a truncated record', () => {
    const buf = new Uint8Array(4096);
    const n = encodePodStatus(podStatus(), buf);
    expect(() => decodePodStatus(buf, n - 1)).toThrow(/truncated/);
  });
});
