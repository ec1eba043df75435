/**
 * `npm start` as a newcomer runs it: the agent CLI (bin/kubelet-ts.js, with the flags of package.json's
 * `start` script) on the embedded simulated runtime with examples/manifests, from start until web runs, job
 * has succeeded and crashloop is in CrashLoopBackOff, then Ctrl-C (SIGINT). A healthy run logs no line at
 * warning or error level (issue 29: the PLEG start-up skips, the backoff "errors", the oomScoreAdj line).
 * Only the state directories and ports differ from `npm start`, so the test runs beside a demo.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const OWN_STATE = /^--(root-dir|pod-logs-dir|container-logs-dir)=/;

/** The flags `npm start` passes to bin/kubelet-ts.js. */
function startFlags(): string[] {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const at = script.indexOf('./bin/kubelet-ts.js ');
  if (at < 0) throw new Error(`package.json start script does not run ./bin/kubelet-ts.js: ${script}`);
  return script
    .slice(at + './bin/kubelet-ts.js '.length)
    .split(/\s+/)
    .filter(Boolean);
}

function getJson<T>(port: number, path: string): Promise<T> {
  return new Promise((res, rej) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (r) => {
      let body = '';
      r.on('data', (d: Buffer) => (body += d.toString()));
      r.on('end', () => (r.statusCode === 200 ? res(JSON.parse(body) as T) : rej(new Error(`${path}: HTTP ${r.statusCode}`))));
    });
    req.on('error', rej);
    req.end();
  });
}

const dir = mkdtempSync(join(tmpdir(), 'kts-demo-'));
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

it('a healthy demo run, start to Ctrl-C, logs no warning or error line', async () => {
  const port = await freePort();
  const flags = [
    ...startFlags().filter((f) => !OWN_STATE.test(f)),
    `--root-dir=${join(dir, 'root')}`,
    `--pod-logs-dir=${join(dir, 'pod-logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--address=127.0.0.1',
    `--port=${port}`,
    `--healthz-port=${await freePort()}`,
  ];
  expect(flags).toContain('--container-runtime-endpoint=sim');
  expect(flags).toContain('--pod-manifest-path=examples/manifests');
  const lines: string[] = [];
  child = spawn(join(root, 'bin/kubelet-ts.js'), flags, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));

  const pods = async () => (await getJson<{ items: Pod[] }>(port, '/pods')).items;
  const byName = (items: Pod[], name: string) => items.find((p) => p.metadata.name === `${name}-demo-node`);
  await pollUntil(
    'web Running, job Succeeded, crashloop in CrashLoopBackOff and the boot summary line',
    async () => {
      if (child!.exitCode !== null) throw new Error(`the agent exited:\n${lines.join('\n')}`);
      const items = await pods();
      return (
        lines.some((l) => l.includes('"All pods started"')) &&
        byName(items, 'web')?.status?.phase === 'Running' &&
        byName(items, 'job')?.status?.phase === 'Succeeded' &&
        byName(items, 'crashloop')?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff'
      );
    },
    { timeoutMs: 50_000, intervalMs: 250 },
  );
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(lines.filter((l) => /^[EWF]\d{4} /.test(l))).toEqual([]);
});
