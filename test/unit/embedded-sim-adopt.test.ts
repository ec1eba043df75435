/**
 * How a starting agent judges the sim named by `<root-dir>/sim/sim.pid`
 * (findLeftSim), with a fake process table: a live sim for this socket that
 * answers is adopted, one that does not answer is killed, a dead or unrelated
 * pid is stale, and a live process that cannot be identified is refused.
 */
import { describe, expect, it } from 'vitest';
import { findLeftSim, isSimFor, type LeftSimProbe } from '../../src/main/startup/embedded-sim.js';

const ENDPOINT = 'unix:///var/lib/kubelet-ts/sim/cri.sock';
const PID_FILE = '/var/lib/kubelet-ts/sim/sim.pid';
const SIM_ARGV = [
  '/usr/bin/node',
  '/usr/lib/node_modules/kubelet-ts/bin/kubelet-ts-sim.js',
  '--listen',
  ENDPOINT,
  '--owner-pid-file',
  '/var/lib/kubelet-ts/sim/owner.pid',
  '--orphan-grace',
  '60s',
];

function probe(p: { alive?: boolean; argv?: string[]; answers?: boolean }): LeftSimProbe & { asked: number } {
  const self = {
    asked: 0,
    isAlive: () => p.alive ?? true,
    argv: () => p.argv,
    answers: async () => {
      self.asked++;
      return p.answers ?? false;
    },
  };
  return self;
}

describe('isSimFor', () => {
  it('matches the installed bin and the sources, listening on this endpoint only', () => {
    expect(isSimFor(SIM_ARGV, ENDPOINT)).toBe(true);
    expect(isSimFor(['node', '/x/bin/kubelet-ts-sim.js', `--listen=${ENDPOINT}`], ENDPOINT)).toBe(true);
    expect(isSimFor(['/usr/bin/kubelet-ts-sim', '--listen', ENDPOINT], ENDPOINT)).toBe(true);
    expect(isSimFor(['node', '--import', 'tsx', '/w/src/sim/cli.ts', '--listen', ENDPOINT], ENDPOINT)).toBe(true);
    expect(isSimFor([...SIM_ARGV.slice(0, 3), 'unix:///other/cri.sock'], ENDPOINT)).toBe(false);
    expect(isSimFor(['/usr/bin/node', '/usr/lib/node_modules/kubelet-ts/bin/kubelet-ts.js', ENDPOINT], ENDPOINT)).toBe(false);
    expect(isSimFor(['sleep', 'infinity'], ENDPOINT)).toBe(false);
  });
});

describe('findLeftSim', () => {
  it('no sim.pid, or a dead pid: nothing to adopt, the socket is not even asked', async () => {
    for (const [pid, p] of [
      [undefined, probe({ argv: SIM_ARGV, answers: true })],
      [42, probe({ alive: false, argv: SIM_ARGV, answers: true })],
    ] as const) {
      expect(await findLeftSim(pid, ENDPOINT, PID_FILE, p)).toEqual({ kind: 'none' });
      expect(p.asked).toBe(0);
    }
  });

  it('a live sim for this socket that answers is adopted', async () => {
    expect(await findLeftSim(42, ENDPOINT, PID_FILE, probe({ argv: SIM_ARGV, answers: true }))).toEqual({ kind: 'live', pid: 42 });
  });

  it('a live sim for this socket that does not answer is hung (to be killed)', async () => {
    expect(await findLeftSim(42, ENDPOINT, PID_FILE, probe({ argv: SIM_ARGV, answers: false }))).toEqual({ kind: 'hung', pid: 42 });
  });

  it('a reused pid (another program, or the sim of another socket) is stale: never adopted or killed', async () => {
    for (const argv of [
      ['/usr/sbin/sshd', '-D'],
      [...SIM_ARGV.slice(0, 3), 'unix:///elsewhere/cri.sock'],
    ]) {
      const p = probe({ argv, answers: true });
      expect(await findLeftSim(42, ENDPOINT, PID_FILE, p)).toEqual({ kind: 'none' });
      expect(p.asked).toBe(0);
    }
  });

  it('a live process /proc does not show: adopted when the socket answers, else refused with pid and file', async () => {
    expect(await findLeftSim(42, ENDPOINT, PID_FILE, probe({ answers: true }))).toEqual({ kind: 'live', pid: 42 });
    await expect(findLeftSim(42, ENDPOINT, PID_FILE, probe({ answers: false }))).rejects.toThrow(
      /process 42 named by \/var\/lib\/kubelet-ts\/sim\/sim\.pid is alive, does not answer on unix:\/\/\/var\/lib\/kubelet-ts\/sim\/cri\.sock/,
    );
  });
});
