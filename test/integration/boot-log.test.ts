/**
 * What an operator sees at the default verbosity while the node boots 500
 * static pods on the simulated runtime: the start line, progress lines
 * (desired / admitted / running) and one summary line when all run, and
 * fewer than 50 lines in all.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const PODS = 500;
let dir: string | undefined;
let agent: AgentHandle | undefined;

afterAll(async () => {
  await agent?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a 500-pod boot prints progress and one summary line, under 50 lines at --v=0', async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-boot-log-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  for (let i = 0; i < PODS; i++) {
    writeFileSync(
      join(manifests, `p${i}.json`),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${i}`, namespace: 'boot' },
        spec: { containers: [{ name: 'app', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', 'infinity'] }] },
      }),
    );
  }
  const cl = parseCommandLine([
    '--container-runtime-endpoint=sim',
    `--pod-manifest-path=${manifests}`,
    `--root-dir=${join(dir, 'root')}`,
    `--pod-logs-dir=${join(dir, 'logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--hostname-override=boot-node',
    '--address=127.0.0.1',
    `--port=${await freePort()}`,
    `--read-only-port=${await freePort()}`,
    `--healthz-port=${await freePort()}`,
    '--max-pods=600',
  ]);
  if (cl.kind !== 'run') throw new Error('unexpected command line');
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  agent = await startAgent(cl.config, createLogger({ format: 'json', verbosity: 0, destination: sink }));
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const summary = await pollUntil('the summary line', () => records().find((r) => r.msg === 'All pods started'), {
    timeoutMs: 240_000,
    intervalMs: 250,
  });
  expect(summary).toMatchObject({ desired: PODS, admitted: PODS, running: PODS, completed: 0 });
  const progress = records().filter((r) => r.msg === 'Pods starting');
  expect(progress.length).toBeGreaterThan(0);
  for (const key of ['desired', 'admitted', 'running']) expect(typeof progress[0][key]).toBe('number');
  expect(records().filter((r) => r.msg === 'Starting kubelet-ts')).toHaveLength(1);
  expect(lines.length, lines.join('\n')).toBeLessThan(50);
});
