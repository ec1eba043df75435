/**
 * The embedded simulated runtime (`--container-runtime-endpoint=sim`) across
 * agent crashes, with the real CLIs as child processes: after `kill -9` of
 * the agent the sim keeps running, a restarted agent on the same root dir
 * takes it over and adopts the pods (same container, no restart, one sim
 * process), and a clean stop of the agent ends the sim without a warning. A
 * sim whose owner stays dead for its grace period exits by itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { createLogger } from '../../src/common/logger.js';
import { pidAlive, writePidFile } from '../../src/common/pid-file.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { startEmbeddedSim, type EmbeddedSim } from '../../src/main/startup/embedded-sim.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const AGENT_BIN = join(ROOT, 'bin/kubelet-ts.js');
const SIM_BIN = join(ROOT, 'bin/kubelet-ts-sim.js');
const LONG = { timeoutMs: 45_000, intervalMs: 100 };

interface Proc {
  child: ChildProcess;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const procs: Proc[] = [];
const embedded: EmbeddedSim[] = [];
let dir: string | undefined;

function run(args: string[], opts: { detached?: boolean } = {}): Proc {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...String(chunk).split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const p = { child, lines, exited };
  procs.push(p);
  return p;
}

/** Live processes (zombies have an empty cmdline) of the sim serving `socket`. */
function simPids(socket: string): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv.some((a) => a.endsWith('kubelet-ts-sim.js')) && argv.includes(`unix://${socket}`)) pids.push(Number(e));
  }
  return pids;
}

afterEach(async () => {
  for (const sim of embedded.splice(0)) await sim.stop();
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  if (dir) {
    const socket = join(dir, 'root/sim/cri.sock');
    for (const pid of simPids(socket)) process.kill(pid, 'SIGKILL');
    await waitFor(() => simPids(socket).length === 0, { what: 'leftover sims to die' });
    rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  }
});

async function node() {
  dir = mkdtempSync(join(tmpdir(), 'kts-takeover-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, 'web.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'takeover' },
      spec: { containers: [{ name: 'web', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', 'infinity'] }] },
    }),
  );
  const root = join(dir, 'root');
  const socket = join(root, 'sim/cri.sock');
  const d = dir;
  const startAgent = async () => {
    const readOnlyPort = await freePort();
    const agent = run(
      [
        AGENT_BIN,
        '--container-runtime-endpoint=sim',
        `--pod-manifest-path=${manifests}`,
        `--root-dir=${root}`,
        `--pod-logs-dir=${join(d, 'logs')}`,
        `--container-logs-dir=${join(d, 'containers')}`,
        '--hostname-override=takeover-node',
        '--address=127.0.0.1',
        `--port=${await freePort()}`,
        `--read-only-port=${readOnlyPort}`,
        `--healthz-port=${await freePort()}`,
        '--file-check-frequency=1s',
        '--worker-threads=1',
      ],
      { detached: true },
    );
    const webStatus = async () => {
      const res = await fetch(`http://127.0.0.1:${readOnlyPort}/pods`).catch(() => undefined);
      if (!res?.ok) return undefined;
      const pod = ((await res.json()) as { items: Pod[] }).items.find((p) => p.metadata.name === 'web-takeover-node');
      const c = pod?.status?.containerStatuses?.[0];
      return pod?.status?.phase === 'Running' && c?.state?.running ? c : undefined;
    };
    return { ...agent, webStatus };
  };
  const runningWebIds = async () => {
    const cri = new CriClient({ runtimeEndpoint: `unix://${socket}`, timeoutMs: 5000 });
    try {
      const list = await cri.listContainers({ filter: { labelSelector: { 'io.kubernetes.container.name': 'web' } } });
      return list.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.id);
    } finally {
      cri.close();
    }
  };
  return { root, socket, startAgent, runningWebIds };
}

it(
  'a restarted agent takes over the sim left by a killed one and adopts its pods; a clean stop ends the sim',
  { timeout: 150_000 },
  async () => {
    const { root, socket, startAgent, runningWebIds } = await node();
    const first = await startAgent();
    const before = await waitFor(() => first.webStatus(), { ...LONG, what: 'web Running under the first agent' });
    const [simPid] = simPids(socket);
    expect(simPids(socket)).toEqual([simPid]);
    const ids = await runningWebIds();
    expect(ids).toHaveLength(1);
    expect(before.containerID).toContain(ids[0]);

    first.child.kill('SIGKILL');
    await first.exited;
    await waitFor(() => first.lines.some((l) => l.includes('The owning agent is gone')), { what: 'the sim to notice its agent is gone' });
    expect(simPids(socket)).toEqual([simPid]);

    const second = await startAgent();
    const after = await waitFor(() => second.webStatus(), { ...LONG, what: 'web Running under the second agent' });
    expect(after.containerID).toBe(before.containerID);
    expect(after.restartCount).toBe(0);
    expect(await runningWebIds()).toEqual(ids);
    expect(simPids(socket)).toEqual([simPid]);
    expect(readFileSync(join(root, 'sim/owner.pid'), 'utf8').trim()).toBe(String(second.child.pid));
    expect(second.lines.some((l) => l.includes('Adopted the embedded simulated runtime left by a previous agent'))).toBe(true);
    await waitFor(() => first.lines.some((l) => l.includes('Taken over by a new agent')), { what: 'the sim to log the takeover' });

    process.kill(-second.child.pid!, 'SIGINT');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => simPids(socket).length === 0, { ...LONG, what: 'the adopted sim to stop with its agent' });
    expect(second.lines.filter((l) => /^[WE]/.test(l) && l.includes('simulated runtime'))).toEqual([]);
    expect(second.lines.some((l) => /^I.*Stopped the embedded simulated runtime/.test(l))).toBe(true);
    expect(existsSync(join(root, 'sim/sim.pid'))).toBe(false);
  },
);

it('Ctrl-C of an agent that spawned its sim stops the sim and logs no warning', { timeout: 120_000 }, async () => {
  const { socket, startAgent } = await node();
  const agent = await startAgent();
  await waitFor(() => agent.webStatus(), { ...LONG, what: 'web Running' });
  expect(simPids(socket)).toHaveLength(1);
  process.kill(-agent.child.pid!, 'SIGINT');
  expect(await agent.exited).toEqual({ code: 0, signal: null });
  await waitFor(() => simPids(socket).length === 0, { ...LONG, what: 'the sim to stop with its agent' });
  expect(agent.lines.filter((l) => /^[WE]/.test(l) && l.includes('simulated runtime'))).toEqual([]);
  expect(agent.lines.some((l) => /^I.*Stopped the embedded simulated runtime/.test(l))).toBe(true);
});

it('a sim whose owner is dead for the grace period exits by itself and removes its socket', async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-takeover-'));
  const simDir = join(dir, 'root/sim');
  mkdirSync(simDir, { recursive: true });
  const socket = join(simDir, 'cri.sock');
  const ownerFile = join(simDir, 'owner.pid');
  const owner = run(['-e', 'setInterval(() => {}, 1 << 30)']);
  writeFileSync(ownerFile, `${owner.child.pid}\n`);
  const sim = run([SIM_BIN, '--listen', `unix://${socket}`, '--owner-pid-file', ownerFile, '--orphan-grace', '1s']);
  await waitFor(() => sim.lines.some((l) => l.includes('Simulated CRI runtime listening')) || sim.child.exitCode !== null, {
    ...LONG,
    what: 'the sim to listen',
  });
  expect(sim.child.exitCode).toBeNull();
  expect(simPids(socket)).toEqual([sim.child.pid]);

  owner.child.kill('SIGKILL');
  await owner.exited;
  expect(await sim.exited).toEqual({ code: 0, signal: null });
  expect(sim.lines.some((l) => l.includes('The owning agent stayed gone; exiting') && l.includes(`ownerPid=${owner.child.pid}`))).toBe(
    true,
  );
  expect(existsSync(socket)).toBe(false);
});

it('a starting agent kills a hung sim named by sim.pid, and leaves an unrelated live pid alone', async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-takeover-'));
  const root = join(dir, 'root');
  const simDir = join(root, 'sim');
  mkdirSync(simDir, { recursive: true });
  const socket = join(simDir, 'cri.sock');
  const lines: string[] = [];
  const logger = createLogger({ format: 'text', verbosity: 0, destination: { write: (l: string) => void lines.push(l) } });
  const keepAlive = ['-e', 'setInterval(() => {}, 1 << 30)'];

  const hung = run([...keepAlive, SIM_BIN, '--listen', `unix://${socket}`]);
  await waitFor(() => simPids(socket).includes(hung.child.pid!), { what: 'the hung stand-in to start' });
  writePidFile(join(simDir, 'sim.pid'), hung.child.pid!);
  const first = await startEmbeddedSim(root, realClock, logger);
  embedded.push(first);
  await waitFor(() => hung.child.signalCode === 'SIGKILL', { what: 'the hung stand-in to be killed' });
  expect(first.adopted).toBe(false);
  expect(simPids(socket)).toEqual([first.pid]);
  expect(lines.some((l) => /^W.*Killing the embedded simulated runtime left by a previous agent/.test(l))).toBe(true);
  await first.stop();
  expect(simPids(socket)).toEqual([]);

  const other = run(keepAlive);
  writePidFile(join(simDir, 'sim.pid'), other.child.pid!);
  const second = await startEmbeddedSim(root, realClock, logger);
  embedded.push(second);
  expect(second.adopted).toBe(false);
  expect(simPids(socket)).toEqual([second.pid]);
  expect(pidAlive(other.child.pid!)).toBe(true);
  await second.stop();
  expect(lines.filter((l) => /^E/.test(l) || l.includes('unexpectedly'))).toEqual([]);
});
