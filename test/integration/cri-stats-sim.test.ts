/**
 * The criStats task's pod network against the simulated runtime: a pod-network sandbox gets the sim's
 * derived eth0 counters from its sandbox stats; a host-network sandbox, which the sim (like containerd)
 * gives no network, gets the interfaces of the namespace of the verbose status's pid (1 on the sim).
 * Counters set through SimControl.setSandboxNetwork replace the derived ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { NamespaceMode } from '../../src/gen/runtime/v1/api.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { criStats } from '../../src/workers/stats/cri-stats.js';

describe('criStats pod network on the simulated runtime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-cri-stats-sim-'));
  let sim: SimRuntimeHandle;
  let cri: CriClient;

  beforeAll(async () => {
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    for (const [name, network] of [
      ['pod-net', NamespaceMode.POD],
      ['host-net', NamespaceMode.NODE],
    ] as const) {
      await cri.runPodSandbox({
        config: {
          metadata: { name, namespace: 'ns', uid: `uid-${name}`, attempt: 0 },
          logDirectory: join(dir, 'logs', name),
          linux: { securityContext: { namespaceOptions: { network, pid: NamespaceMode.POD, ipc: NamespaceMode.POD, targetId: '' } } },
        },
      });
    }
  });

  afterAll(async () => {
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pod network: the sim's derived eth0; host network: the namespace of pid 1", async () => {
    const asked: number[] = [];
    const hostIfaces = [{ name: 'ens3', rxBytes: 11n, rxErrors: 0n, txBytes: 22n, txErrors: 0n }];
    const snap = await criStats(cri, { procNetwork: true, netDev: (pid) => (asked.push(pid), hostIfaces) });
    const byName = new Map(snap.pods.map((p) => [p.name, p]));
    const podNet = byName.get('pod-net')?.network;
    expect(podNet?.defaultName).toBe('eth0');
    expect(podNet?.interfaces.map((i) => i.name)).toEqual(['eth0']);
    expect(podNet?.time).toBeGreaterThan(0n);
    expect(byName.get('host-net')?.network?.interfaces).toEqual(hostIfaces);
    expect(asked).toEqual([1]);
  });

  it('counters set through the control replace the derived ones; the others stay derived', async () => {
    const id = (await cri.listPodSandbox({})).items.find((s) => s.metadata?.name === 'pod-net')!.id;
    sim.control.setSandboxNetwork(id, { rxBytes: 123_456, rxErrors: 7 });
    const eth0 = (await criStats(cri, { netDev: () => [] })).pods.find((p) => p.name === 'pod-net')?.network?.interfaces[0];
    expect(eth0).toMatchObject({ name: 'eth0', rxBytes: 123_456n, rxErrors: 7n, txErrors: 0n });
    expect(eth0?.txBytes).toBeDefined();
    expect(() => sim.control.setSandboxNetwork(id, { rxBytes: -1 })).toThrow();
  });
});
