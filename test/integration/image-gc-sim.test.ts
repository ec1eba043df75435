/**
 * Image GC over real CRI calls to the simulated runtime (image-gc-runtime.ts
 * + image-gc-manager.ts): the sim's images, containers and pinned pause image
 * through gRPC, and the image fs mountpoint the sim reports (set through its
 * control interface) handed to statfs, here a stand-in that returns the
 * figures the test chooses for that mountpoint only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectReference } from '../../src/api/cluster.js';
import { CriClient } from '../../src/cri/client.js';
import type { EventRecorder } from '../../src/main/events/event-recorder.js';
import { ImageGcManager } from '../../src/main/images/image-gc-manager.js';
import { criImageGcRuntime } from '../../src/main/images/image-gc-runtime.js';
import { ImageListCache } from '../../src/main/images/image-list-cache.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { FakeClock } from '../fakes/fake-clock.js';

const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
const PAUSE = 'docker.io/kubelet-ts/pause:1.0';
const OLD = 'docker.io/library/old:1';
const NEW = 'docker.io/library/new:1';
const MOUNT = '/mnt/sim-imagefs';
const CAPACITY = 1_000_000_000n;

describe('image GC against the simulated runtime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-imggc-sim-'));
  let sim: SimRuntimeHandle;
  let cri: CriClient;

  beforeAll(async () => {
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}`, images: [OLD] });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
  });

  afterAll(async () => {
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('removes the least recently detected unused image; the in-use and pinned images stay', async () => {
    sim.control.setImageFsMountpoint(MOUNT);
    const { podSandboxId } = await cri.runPodSandbox({
      config: { metadata: { name: 'p', namespace: 'ns', uid: 'u1', attempt: 0 }, logDirectory: join(dir, 'logs') },
    });
    const { containerId } = await cri.createContainer({
      podSandboxId,
      config: { metadata: { name: 'app', attempt: 0 }, image: { image: BUSYBOX }, command: ['sleep', '3600'], logPath: 'app/0.log' },
    });
    await cri.startContainer({ containerId });

    const clock = new FakeClock();
    const { logger } = captureLogger();
    let available = CAPACITY; // empty until the test says otherwise
    const statfsPaths: string[] = [];
    const host = {
      fsStats: (path: string) => {
        statfsPaths.push(path);
        if (path !== MOUNT) throw new Error(`ENOENT: statfs ${path}`);
        return { capacityBytes: CAPACITY, availableBytes: available, inodes: 1000n, inodesFree: 1000n };
      },
    };
    const events: string[] = [];
    const recorder: EventRecorder = { record: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) };
    const gc = new ImageGcManager({
      runtime: criImageGcRuntime({ cri, imageList: new ImageListCache(cri, clock, logger), host, logger }),
      policy: { highThresholdPercent: 41, lowThresholdPercent: 40, minAgeMs: 0 },
      periodMs: 300_000,
      clock,
      logger,
      recorder,
      nodeRef: { kind: 'Node', name: 'n', uid: 'n', namespace: '' } satisfies ObjectReference,
    });

    await gc.runOnce(); // first detection: busybox, pause, OLD
    sim.control.seedImages([NEW]);
    clock.step(60_000);
    // 41% used: one byte over the low mark, so exactly one image goes.
    available = (CAPACITY * 60n) / 100n - 1n;
    await gc.runOnce();

    const tags = (await cri.listImages({})).images.flatMap((i) => i.repoTags).sort();
    expect(tags).toEqual([BUSYBOX, NEW, PAUSE].sort());
    expect(new Set(statfsPaths)).toEqual(new Set([MOUNT]));
    expect(events).toEqual([]);
  });
});
