/**
 * A relist loop on a real piscina pool leaves no MessagePort behind when it
 * stops: the handler's comlink proxy is released, which closes the port that
 * exposes the handler on the main thread (one used to stay open per loop).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { createSharedState } from '../../src/shared/shared-state.js';
import { PoolRunner } from '../../src/workers/task-runner.js';
import type { RelistReport } from '../../src/workers/protocol/protocol.js';
import { pollUntil } from '../helpers/poll.js';

/** Main-thread MessagePorts that keep the event loop alive (a port with a message listener does). */
function openPorts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
}

describe('relist loop on the worker pool', () => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let runner: PoolRunner;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-loop-ports-'));
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    const shared = createSharedState({ maxPods: 8 });
    runner = new PoolRunner(shared.workerInit(sim.endpoint, { timeoutMs: 30_000 }), { threads: 1 });
  });

  afterAll(async () => {
    await runner.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes the handler port of every stopped loop', async () => {
    const baseline = openPorts();
    const reports: RelistReport[] = [];
    for (let i = 0; i < 3; i++) {
      const conn = runner.relistLoop();
      await conn.api.attach({
        relisted: (report) => {
          reports.push(report);
          return Promise.resolve({ busy: false });
        },
      });
      await conn.api.relistNow();
      // As the PLEG and the runner stop a loop: the stop call's answer can be lost when the loop's port closes.
      await Promise.race([conn.api.stop(), conn.ended]);
      expect(await conn.ended).toBeUndefined();
    }
    expect(reports).toHaveLength(3);
    // Released, they close within milliseconds; left to the worker's garbage collector (comlink's finalizer),
    // they took ~8 s here.
    await pollUntil('the stopped loops’ handler ports to close', () => openPorts() <= baseline, { timeoutMs: 3_000 });
    expect(openPorts()).toBeLessThanOrEqual(baseline);
  });
});
