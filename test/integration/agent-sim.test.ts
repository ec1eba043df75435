/**
 * The whole agent in-process (worker pool included) against the simulated
 * runtime: the runtime health gate with backoff, orphan clean-up, admission
 * rejection and dead-container clean-up.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { createLogger } from '../../src/common/logger.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { runRawPod } from '../../src/sim/populate.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const manifest = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'it' }, spec });
const busybox = (name: string, command: string[], extra: Record<string, unknown> = {}) => ({
  name,
  image: 'docker.io/kubelet-ts/busybox:1.0',
  command,
  ...extra,
});

describe('agent on the simulated runtime', () => {
  let dir: string;
  let manifests: string;
  let sim: SimRuntimeHandle;
  let agent: AgentHandle;
  let cri: CriClient;
  const lines: string[] = [];

  const pods = async (): Promise<Pod[]> =>
    ((await (await fetch(`http://127.0.0.1:${agent.readOnlyPort}/pods`)).json()) as { items: Pod[] }).items;
  const pod = async (name: string) => (await pods()).find((p) => p.metadata.name === `${name}-it-node`);
  const write = (name: string, body: string) => writeFileSync(join(manifests, `${name}.json`), body);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-agent-'));
    manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    write('web', manifest('web', { containers: [busybox('web', ['sleep', 'infinity'])] }));
    const cl = parseCommandLine([
      `--container-runtime-endpoint=${sim.endpoint}`,
      `--pod-manifest-path=${manifests}`,
      `--root-dir=${join(dir, 'root')}`,
      `--pod-logs-dir=${join(dir, 'logs')}`,
      `--container-logs-dir=${join(dir, 'containers')}`,
      '--hostname-override=it-node',
      '--address=127.0.0.1',
      `--port=${await freePort()}`,
      `--read-only-port=${await freePort()}`,
      `--healthz-port=${await freePort()}`,
      '--file-check-frequency=1s',
      '--worker-threads=1',
    ]);
    if (cl.kind !== 'run') throw new Error('unexpected command line');
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const logger = createLogger({ format: 'json', verbosity: 2, destination: sink });
    agent = await startAgent(cl.config, logger);
  });

  afterAll(async () => {
    await agent?.stop();
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a static pod', async () => {
    await pollUntil('web Running', async () => (await pod('web'))?.status?.phase === 'Running');
  });

  it('skips pod synchronization with growing backoff while the runtime is down, then catches up', async () => {
    sim.control.setRuntimeDown(true);
    const from = lines.length;
    const skips = () =>
      lines
        .slice(from)
        .filter((l) => l.includes('Skipping pod synchronization'))
        .map((l) => (JSON.parse(l) as { retryInMs: number }).retryInMs);
    await pollUntil('three skipped iterations', () => skips().length >= 3, { timeoutMs: 30_000 });
    const backoffs = skips();
    expect(backoffs.slice(0, 3)).toEqual([100, 200, 400]);
    write('late', manifest('late', { containers: [busybox('late', ['sleep', 'infinity'])] }));
    await pollUntil('a few more skips', () => skips().length >= 5, { timeoutMs: 30_000 });
    expect(
      (
        await cri
          .listContainers({ filter: { labelSelector: { 'io.kubernetes.container.name': 'late' } } })
          .catch(() => ({ containers: [] }))
      ).containers,
    ).toEqual([]);
    sim.control.setRuntimeDown(false);
    await pollUntil('late Running after recovery', async () => (await pod('late'))?.status?.phase === 'Running', { timeoutMs: 30_000 });
  });

  it('kills a pod that only the runtime knows (orphan); removing it is left to container GC', async () => {
    const orphan = await runRawPod(cri, {
      uid: 'orphan-uid',
      name: 'orphan',
      namespace: 'it',
      containers: [{ name: 'x', command: ['sleep', 'infinity'] }],
    });
    await pollUntil(
      'the orphan stopped',
      async () => {
        const boxes = (await cri.listPodSandbox({ filter: { id: orphan.sandboxId } })).items;
        const running = (
          await cri.listContainers({ filter: { podSandboxId: orphan.sandboxId, state: { state: ContainerState.CONTAINER_RUNNING } } })
        ).containers;
        return boxes.length === 1 && boxes[0].state === PodSandboxState.SANDBOX_NOTREADY && running.length === 0;
      },
      { timeoutMs: 30_000 },
    );
    expect(lines.some((l) => l.includes('Clean up orphaned pod') && l.includes('orphan-uid'))).toBe(true);
  });

  it('rejects a pod that does not fit (OutOfcpu): Failed, never started', async () => {
    write('huge', manifest('huge', { containers: [busybox('huge', ['sleep', 'infinity'], { resources: { requests: { cpu: '512' } } })] }));
    const p = await pollUntil('huge rejected', async () => {
      const x = await pod('huge');
      return x?.status?.phase === 'Failed' && x;
    });
    expect(p.status?.reason).toBe('OutOfcpu');
    expect(p.status?.message).toMatch(/Node didn't have enough resource: cpu/);
    const containers = await cri.listContainers({ filter: { labelSelector: { 'io.kubernetes.container.name': 'huge' } } });
    expect(containers.containers).toEqual([]);
  });

  it('keeps only the newest dead instance of a crash-looping container', async () => {
    write('crash', manifest('crash', { containers: [busybox('crash', ['sh', '-c', 'exit 1'])] }));
    await pollUntil('restartCount >= 2', async () => ((await pod('crash'))?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2, {
      timeoutMs: 60_000,
    });
    await pollUntil(
      'at most 2 instances (1 dead kept + the current one)',
      async () => {
        const cs = (await cri.listContainers({ filter: { labelSelector: { 'io.kubernetes.container.name': 'crash' } } })).containers;
        return cs.length <= 2;
      },
      { timeoutMs: 30_000 },
    );
    const p = await pod('crash');
    expect(p?.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
  });
});
