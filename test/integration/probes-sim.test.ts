/**
 * Probes end to end on the simulated runtime, the whole agent in-process with
 * its worker pool and prober thread: exec probes run as CRI ExecSync against
 * the simulator, whose `cat` reads files the test sets per container.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { createLogger } from '../../src/common/logger.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const NODE = 'probe-node';
const exec = (path: string, extra: Record<string, unknown> = {}) => ({ exec: { command: ['cat', path] }, periodSeconds: 1, ...extra });
const manifest = (name: string, containers: Record<string, unknown>[], initContainers?: Record<string, unknown>[]) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'pr' },
    spec: { terminationGracePeriodSeconds: 1, containers, ...(initContainers && { initContainers }) },
  });
const ctr = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'docker.io/kubelet-ts/busybox:1.0',
  command: ['sleep', 'infinity'],
  ...extra,
});

describe('probes on the simulated runtime', () => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let agent: AgentHandle;
  let cri: CriClient;
  let readOnlyPort = 0;
  const lines: string[] = [];

  const pod = async (name: string): Promise<Pod | undefined> => {
    const list = (await (await fetch(`http://127.0.0.1:${readOnlyPort}/pods`)).json()) as { items: Pod[] };
    return list.items.find((p) => p.metadata.name === `${name}-${NODE}`);
  };
  const condition = (p: Pod | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type)?.status;
  const runningId = async (container: string) =>
    (
      await cri.listContainers({
        filter: { labelSelector: { 'io.kubernetes.container.name': container }, state: { state: ContainerState.CONTAINER_RUNNING } },
      })
    ).containers[0]?.id;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-probes-'));
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    writeFileSync(join(manifests, 'ready.json'), manifest('ready', [ctr('web', { readinessProbe: exec('/ready') })]));
    writeFileSync(
      join(manifests, 'live.json'),
      manifest('live', [ctr('wedge', { livenessProbe: exec('/alive', { failureThreshold: 2 }) })]),
    );
    writeFileSync(
      join(manifests, 'slow.json'),
      manifest('slow', [
        ctr('slowstart', {
          startupProbe: exec('/started', { failureThreshold: 1000 }),
          livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 },
        }),
      ]),
    );
    writeFileSync(
      join(manifests, 'side.json'),
      manifest('side', [ctr('main')], [ctr('helper', { restartPolicy: 'Always', startupProbe: exec('/up', { failureThreshold: 1000 }) })]),
    );
    readOnlyPort = await freePort();
    const cl = parseCommandLine([
      `--container-runtime-endpoint=${sim.endpoint}`,
      `--pod-manifest-path=${manifests}`,
      `--root-dir=${join(dir, 'root')}`,
      `--pod-logs-dir=${join(dir, 'logs')}`,
      `--container-logs-dir=${join(dir, 'containers')}`,
      `--hostname-override=${NODE}`,
      '--address=127.0.0.1',
      `--port=${await freePort()}`,
      `--read-only-port=${readOnlyPort}`,
      `--healthz-port=${await freePort()}`,
      '--file-check-frequency=1s',
      '--worker-threads=1',
      '--v=3',
    ]);
    if (cl.kind !== 'run') throw new Error('unexpected command line');
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    agent = await startAgent(cl.config, createLogger({ format: 'json', verbosity: 3, destination: sink }));
  });

  afterAll(async () => {
    await agent?.stop();
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('readiness: the pod turns Ready only once the exec probe passes', async () => {
    const running = await pollUntil(
      'web running',
      async () => (await pod('ready'))?.status?.phase === 'Running' && (await runningId('web')),
    );
    // Several periods pass without the file: never ready.
    await pollUntil('two failed readiness runs', () => lines.filter((l) => l.includes('Probe failed') && l.includes('"web"')).length >= 2);
    expect(condition(await pod('ready'), 'Ready')).toBe('False');
    expect((await pod('ready'))?.status?.containerStatuses?.[0]?.ready).toBe(false);
    sim.control.setFile(running, '/ready', 'ok');
    await pollUntil('ready Ready', async () => condition(await pod('ready'), 'Ready') === 'True', { timeoutMs: 15_000 });
    const p = await pod('ready');
    expect(condition(p, 'ContainersReady')).toBe('True');
    expect(p?.status?.containerStatuses?.[0]).toMatchObject({ ready: true, started: true });
  });

  it('liveness: a failing exec probe restarts the container with an Unhealthy event', async () => {
    // The earlier tests take a few seconds, so the container may already have
    // been restarted by now: compare against the count seen with `first`.
    const restarts = async () => (await pod('live'))?.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const first = await pollUntil('wedge running', () => runningId('wedge'));
    const before = await restarts();
    await pollUntil('restarted', async () => (await restarts()) > before, { timeoutMs: 60_000 });
    await pollUntil('a new wedge container running', async () => {
      const id = await runningId('wedge');
      return id !== undefined && id !== first;
    });
    expect(lines.some((l) => l.includes('"reason":"Unhealthy"') && l.includes('Liveness probe failed'))).toBe(true);
    expect(lines.some((l) => l.includes('"reason":"Killing"') && l.includes('failed liveness probe, will be restarted'))).toBe(true);
  }, 120_000);

  it('a startup probe holds liveness back until it succeeds', async () => {
    const id = await pollUntil('slowstart running', () => runningId('slowstart'));
    await pollUntil(
      'startup failing a few times',
      () => lines.filter((l) => l.includes('Startup probe failed') && l.includes('slow')).length >= 3,
    );
    // The liveness probe (`false`, failureThreshold 1) never ran: no restart, no liveness event.
    expect((await pod('slow'))?.status?.containerStatuses?.[0]).toMatchObject({ restartCount: 0, started: false, ready: false });
    expect(lines.some((l) => l.includes('Liveness probe failed') && l.includes('slowstart'))).toBe(false);
    sim.control.setFile(id, '/started', 'yes');
    // Started: now liveness runs, fails, and restarts the container.
    await pollUntil(
      'liveness restart after startup',
      async () => ((await pod('slow'))?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
      {
        timeoutMs: 30_000,
      },
    );
  });

  it('a sidecar with a startup probe holds the main container back until it is started', async () => {
    const helper = await pollUntil('helper running', () => runningId('helper'));
    await pollUntil(
      'helper startup failing',
      () => lines.filter((l) => l.includes('Startup probe failed') && l.includes('initContainers{helper}')).length >= 2,
    );
    expect(await runningId('main')).toBeUndefined();
    sim.control.setFile(helper, '/up', '1');
    await pollUntil('main running', () => runningId('main'), { timeoutMs: 20_000 });
    const p = await pollUntil('side Running with helper started', async () => {
      const x = await pod('side');
      return x?.status?.initContainerStatuses?.[0]?.started === true && x;
    });
    expect(p.status?.initContainerStatuses?.[0]).toMatchObject({ name: 'helper', started: true, ready: true });
  });
});
