/**
 * An unreachable runtime at start-up: the agent logs what, where and why,
 * retries with growing backoff, and comes up once the runtime appears.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { createLogger } from '../../src/common/logger.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

describe('agent start-up with an unreachable runtime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-unreach-'));
  let sim: SimRuntimeHandle | undefined;
  let agent: AgentHandle | undefined;

  afterAll(async () => {
    await agent?.stop();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('retries with backoff, naming the endpoint, and starts pods once the runtime is up', async () => {
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(
      join(manifests, 'p.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: u}\nspec:\n  containers: [{name: c, image: docker.io/kubelet-ts/busybox:1.0, command: [sleep, infinity]}]\n',
    );
    const endpoint = `unix://${join(dir, 'late.sock')}`;
    const cl = parseCommandLine([
      `--container-runtime-endpoint=${endpoint}`,
      `--pod-manifest-path=${manifests}`,
      `--root-dir=${join(dir, 'root')}`,
      `--pod-logs-dir=${join(dir, 'logs')}`,
      `--container-logs-dir=${join(dir, 'containers')}`,
      '--hostname-override=n',
      '--address=127.0.0.1',
      `--port=${await freePort()}`,
      `--read-only-port=${await freePort()}`,
      `--healthz-port=${await freePort()}`,
      '--worker-threads=0',
    ]);
    if (cl.kind !== 'run') throw new Error('unexpected command line');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _e, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const starting = startAgent(cl.config, createLogger({ format: 'json', verbosity: 0, destination: sink }));
    const retries = () =>
      lines
        .map((l) => JSON.parse(l) as { msg?: string; retryInMs?: number; endpoint?: string; err?: string })
        .filter((r) => r.msg?.includes('Container runtime is not reachable'));
    await pollUntil('three failed connection attempts', () => retries().length >= 3);
    expect(
      retries()
        .slice(0, 3)
        .map((r) => r.retryInMs),
    ).toEqual([100, 200, 400]);
    expect(retries()[0].endpoint).toBe(endpoint);
    expect(retries()[0].err).toMatch(/UNAVAILABLE/);

    sim = await startSimRuntime({ listen: endpoint });
    agent = await starting;
    const pods = async (): Promise<Pod[]> =>
      ((await (await fetch(`http://127.0.0.1:${agent!.readOnlyPort}/pods`)).json()) as { items: Pod[] }).items;
    await pollUntil('the pod Running', async () => (await pods())[0]?.status?.phase === 'Running', { timeoutMs: 30_000 });
  });
});
