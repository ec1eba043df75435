import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimRuntime } from '../../src/sim/server.js';
import { defineCriConformance } from '../conformance/cri-conformance.js';

defineCriConformance('kubelet-ts-sim', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-sim-'));
  const sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
  return {
    endpoint: sim.endpoint,
    close: async () => {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
