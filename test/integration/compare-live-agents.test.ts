/**
 * kubelet-ts-compare (the built bin) against two live kubelet-ts agents on
 * the simulated runtime, in two modes: parallel relist on a worker thread,
 * and serial relist inline (--worker-threads=0). The counts it prints must
 * be the agents' own: each agent's /metrics is scraped by the test before and
 * after the comparison window, and the snapshot compare saved is read with a
 * plain regex, independent of the project's parser.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { AgentProcess, podManifest } from '../e2e/agent-harness.js';
import { pollUntil } from '../helpers/poll.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const PODS = 4;
const MODES = [
  { name: 'parallel', args: ['--relist-mode=parallel', '--worker-threads=1'] },
  { name: 'serial-inline', args: ['--relist-mode=serial', '--worker-threads=0'] },
];

const relistCount = (text: string) => Number(/^kubelet_pleg_relist_duration_seconds_count (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
const opCount = (text: string, op: string) =>
  Number(
    new RegExp(`^kubelet_runtime_operations_duration_seconds_count\\{operation_type="${op}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN,
  );

/** The start and end sections of one source in a saved snapshot. */
function sections(snapshot: string, name: string): { start: string; end: string } {
  const parts = snapshot.split(/^(# kubelet-ts-compare snapshot .*)$/m);
  const get = (phase: string) => {
    const i = parts.findIndex((p) => p.includes(`name="${name}"`) && p.includes(`phase="${phase}"`));
    return parts[i + 1];
  };
  return { start: get('start'), end: get('end') };
}

describe('kubelet-ts-compare against two live agents', () => {
  const sims: SimRuntimeHandle[] = [];
  const agents: AgentProcess[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-compare-live-'));
    for (const [i, mode] of MODES.entries()) {
      const sim = await startSimRuntime({ listen: `unix://${join(dir, `cri-${i}.sock`)}` });
      sims.push(sim);
      const agent = new AgentProcess(sim.endpoint, `node-${mode.name}`, 'cmp', mode.args);
      agents.push(agent);
      for (let p = 0; p < PODS; p++) agent.writeManifest(`p${p}`, podManifest(`p${p}`, 'cmp', [{ name: 'c', command: ['sleep', '3600'] }]));
      await agent.start();
    }
    for (const agent of agents) {
      await pollUntil(
        `${PODS} pods Running on ${agent.nodeName}`,
        async () => (await agent.pods()).filter((p) => p.status?.phase === 'Running').length === PODS,
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    }
  });

  afterAll(async () => {
    for (const a of agents) await a.cleanup().catch(() => undefined);
    for (const s of sims) await s.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints a table whose counts are the two agents’ own', async () => {
    const urls = agents.map((a) => `http://127.0.0.1:${a.port}/metrics`);
    const own = async () => Promise.all(urls.map(async (u) => (await fetch(u)).text()));
    const before = await own();
    const save = join(dir, 'live.prom');
    const { stdout, stderr } = await run(
      process.execPath,
      [join(root, 'bin/kubelet-ts-compare.js'), '--window', '4s', '--save', save, ...MODES.map((m, i) => `${m.name}=${urls[i]}`)],
      { timeout: 60_000 },
    );
    const after = await own();
    expect(stderr).toMatch(/window: 4 s of 4 s \(2 URL sources\)/);

    const snapshot = readFileSync(save, 'utf8');
    const counts = MODES.map((m, i) => {
      const s = sections(snapshot, m.name);
      const start = relistCount(s.start);
      const end = relistCount(s.end);
      // What compare scraped lies between the test's own scrapes of the same agent.
      expect(relistCount(before[i])).toBeLessThanOrEqual(start);
      expect(start).toBeLessThanOrEqual(end);
      expect(end).toBeLessThanOrEqual(relistCount(after[i]));
      // About one relist a second over 4 s.
      expect(end - start).toBeGreaterThanOrEqual(2);
      return { relists: end - start, lists: opCount(s.end, 'list_podsandbox') - opCount(s.start, 'list_podsandbox') };
    });

    const table = stdout.split('\n');
    const header = table.findIndex((l) => /^stat\s+parallel\s+serial-inline\s+serial-inline\/parallel$/.test(l));
    expect(header, stdout).toBeGreaterThan(0);
    const rowAfter = (section: string) => table[table.indexOf(section) + 1];
    const ratio = (counts[1].relists / counts[0].relists).toFixed(2);
    expect(rowAfter('kubelet_pleg_relist_duration_seconds')).toMatch(
      new RegExp(`^ {2}count\\s+${counts[0].relists}\\s+${counts[1].relists}\\s+${ratio}×$`),
    );
    expect(rowAfter('kubelet_runtime_operations_duration_seconds{operation_type="list_podsandbox"}')).toMatch(
      new RegExp(`^ {2}count\\s+${counts[0].lists}\\s+${counts[1].lists}\\s+`),
    );

    // The saved snapshot alone gives the same numbers.
    const replay = await run(process.execPath, [join(root, 'bin/kubelet-ts-compare.js'), '--json', save]);
    const json = JSON.parse(replay.stdout) as { sources: { name: string; relistDuration: { count: number } }[] };
    expect(json.sources.map((s) => [s.name, s.relistDuration.count])).toEqual(MODES.map((m, i) => [m.name, counts[i].relists]));
  });
});
