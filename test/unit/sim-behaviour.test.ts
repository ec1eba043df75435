import { describe, expect, it } from 'vitest';
import { collect, parseScript, parseSleepMs, planContainer, ScriptSyntaxError, sigtermDisposition } from '../../src/sim/behaviour.js';
import { planExec } from '../../src/sim/exec.js';
import { faultsFromFlags } from '../../src/sim/cli.js';
import { parseLatency, sampleLatency, seededRandom } from '../../src/sim/faults.js';
import { globToRegExp, normalizeRef } from '../../src/sim/images.js';
import { criLogLines, formatRfc3339Nano } from '../../src/sim/logs.js';

type Case = { argv: string[]; exit?: { atMs: number; code: number }; stdout?: string; stderr?: string };

const FOREVER = undefined;

describe('planContainer: argv → behaviour', () => {
  const cases: Record<string, Case> = {
    'empty argv (image entrypoint) runs forever': { argv: [], exit: FOREVER },
    'sleep N exits 0 after N s': { argv: ['sleep', '5'], exit: { atMs: 5000, code: 0 } },
    '/bin/sleep with a path': { argv: ['/bin/sleep', '0.25'], exit: { atMs: 250, code: 0 } },
    'sleep with a unit suffix': { argv: ['sleep', '2m'], exit: { atMs: 120_000, code: 0 } },
    'sleep infinity runs forever': { argv: ['sleep', 'infinity'], exit: FOREVER },
    'sh -c "sleep N"': { argv: ['sh', '-c', 'sleep 3'], exit: { atMs: 3000, code: 0 } },
    'true exits 0': { argv: ['true'], exit: { atMs: 0, code: 0 } },
    'false exits 1': { argv: ['/bin/false'], exit: { atMs: 0, code: 1 } },
    'sh -c "exit K"': { argv: ['/bin/sh', '-c', 'exit 42'], exit: { atMs: 0, code: 42 } },
    'exit code is taken mod 256': { argv: ['sh', '-c', 'exit 257'], exit: { atMs: 0, code: 1 } },
    'echo then exit': { argv: ['sh', '-c', 'echo hello world; exit 3'], exit: { atMs: 0, code: 3 }, stdout: 'hello world\n' },
    'echo, sleep, echo, exit': {
      argv: ['sh', '-c', 'echo a; sleep 1; echo "b c"; exit 0'],
      exit: { atMs: 1000, code: 0 },
      stdout: 'a\nb c\n',
    },
    'command and args are concatenated': { argv: ['sh', '-c', "echo 'x y' && exit 7"], exit: { atMs: 0, code: 7 }, stdout: 'x y\n' },
    '&& stops after a failure': { argv: ['sh', '-c', 'false && echo no; exit'], exit: { atMs: 0, code: 1 } },
    '|| runs after a failure': { argv: ['sh', '-c', 'false || echo yes'], exit: { atMs: 0, code: 0 }, stdout: 'yes\n' },
    'last status is the exit code': { argv: ['sh', '-c', 'echo x; false'], exit: { atMs: 0, code: 1 }, stdout: 'x\n' },
    'newlines separate commands': { argv: ['sh', '-c', 'echo one\necho two'], exit: { atMs: 0, code: 0 }, stdout: 'one\ntwo\n' },
    'exec replaces the shell': { argv: ['sh', '-c', 'exec sleep 2; echo never'], exit: { atMs: 2000, code: 0 } },
    'unknown command runs forever': { argv: ['nginx', '-g', 'daemon off;'], exit: FOREVER },
    'output before an unknown command is kept': { argv: ['sh', '-c', 'echo starting; exec nginx'], exit: FOREVER, stdout: 'starting\n' },
    'a loop is unmodelled: forever': { argv: ['sh', '-c', 'while true; do sleep 1; done'], exit: FOREVER },
    'a pipe is unmodelled: forever': { argv: ['sh', '-c', 'echo x | cat'], exit: FOREVER },
    'bad sleep argument fails': { argv: ['sleep', 'abc'], exit: { atMs: 0, code: 1 }, stderr: "sleep: invalid number 'abc'\n" },
    'nested sh -c': { argv: ['sh', '-c', "sh -c 'exit 4'; exit"], exit: { atMs: 0, code: 4 } },
  };
  it.each(Object.entries(cases))('%s', (_name, c) => {
    const plan = planContainer(c.argv);
    expect(plan.exit).toEqual(c.exit);
    expect(collect(plan, 'stdout')).toBe(c.stdout ?? '');
    expect(collect(plan, 'stderr')).toBe(c.stderr ?? '');
  });

  it('output carries the time it is written', () => {
    const plan = planContainer(['sh', '-c', 'echo a; sleep 1.5; echo b; sleep 1; exit 2']);
    expect(plan.output.map((o) => [o.atMs, o.text])).toEqual([
      [0, 'a\n'],
      [1500, 'b\n'],
    ]);
    expect(plan.exit).toEqual({ atMs: 2500, code: 2 });
  });
});

describe('script parsing', () => {
  it('respects quotes and escapes', () => {
    expect(parseScript(`echo "a;b" 'c && d' e\\ f`)).toEqual([{ first: ['echo', 'a;b', 'c && d', 'e f'], rest: [] }]);
  });
  it('rejects unterminated quotes', () => {
    expect(() => parseScript('echo "x')).toThrow(ScriptSyntaxError);
  });
  it('parses sleep durations', () => {
    expect(parseSleepMs('1')).toBe(1000);
    expect(parseSleepMs('.5')).toBe(500);
    expect(parseSleepMs('1h')).toBe(3_600_000);
    expect(parseSleepMs('x')).toBeUndefined();
  });
});

describe('planExec', () => {
  const files = new Map([['/tmp/ready', 'ok\n']]);
  it.each([
    [['true'], 0, '', ''],
    [['false'], 1, '', ''],
    [['sh', '-c', 'exit 5'], 5, '', ''],
    [['exit', '2'], 2, '', ''],
    [['echo', 'hi'], 0, 'hi\n', ''],
    [['cat', '/tmp/ready'], 0, 'ok\n', ''],
    [['cat', '/nope'], 1, '', "cat: can't open '/nope': No such file or directory\n"],
    [['sh', '-c', 'cat /tmp/ready && echo done'], 0, 'ok\ndone\n', ''],
    [['sh', '-c', 'frobnicate'], 127, '', 'sh: frobnicate: not found\n'],
  ])('%j → exit %i', (cmd, code, stdout, stderr) => {
    const r = planExec(cmd, files);
    expect(r).toMatchObject({ exitCode: code, stdout, stderr, forever: false });
  });
  it('an unknown direct command is an OCI exec error', () => {
    expect(() => planExec(['frobnicate'], files)).toThrow(/executable file not found in \$PATH/);
  });
  it('sleep takes time', () => {
    expect(planExec(['sleep', '2'], files)).toMatchObject({ durationMs: 2000, exitCode: 0 });
    expect(planExec(['sleep', 'infinity'], files).forever).toBe(true);
  });
});

describe('image refs', () => {
  it.each([
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['kubelet-ts/pause:1.0', 'docker.io/kubelet-ts/pause:1.0'],
    ['registry.k8s.io/pause:3.9', 'registry.k8s.io/pause:3.9'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    [`nginx:1@sha256:${'a'.repeat(64)}`, `docker.io/library/nginx@sha256:${'a'.repeat(64)}`],
  ])('%s → %s', (ref, want) => expect(normalizeRef(ref)).toBe(want));
  it('rejects uppercase repositories', () => {
    expect(() => normalizeRef('BusyBox')).toThrow(/must be lowercase/);
  });
  it('globs', () => {
    expect(globToRegExp('docker.io/library/*').test('docker.io/library/nginx:1.25')).toBe(true);
    expect(globToRegExp('docker.io/library/*').test('quay.io/x:1')).toBe(false);
  });
});

describe('CRI log format', () => {
  it('formats RFC3339Nano like Go', () => {
    expect(formatRfc3339Nano(1_763_764_544_527_566_154n)).toBe('2025-11-21T22:35:44.527566154Z');
    expect(formatRfc3339Nano(1_763_764_544_500_000_000n)).toBe('2025-11-21T22:35:44.5Z');
    expect(formatRfc3339Nano(1_763_764_544_000_000_000n)).toBe('2025-11-21T22:35:44Z');
  });
  it('marks full and partial lines', () => {
    expect(criLogLines(1_763_764_544_000_000_000n, 'stdout', 'a\nb')).toBe(
      '2025-11-21T22:35:44Z stdout F a\n2025-11-21T22:35:44Z stdout P b\n',
    );
  });
});

describe('faults', () => {
  it('parses latency specs', () => {
    expect(parseLatency('fixed:5')).toEqual({ kind: 'fixed', ms: 5 });
    expect(parseLatency('uniform:1:3')).toEqual({ kind: 'uniform', minMs: 1, maxMs: 3 });
    expect(() => parseLatency('gamma:1')).toThrow(/bad latency/);
  });
  it('lognormal matches its median and p99', () => {
    const rand = seededRandom(7);
    const xs = Array.from({ length: 20_000 }, () => sampleLatency({ kind: 'lognormal', medianMs: 10, p99Ms: 100 }, rand)).sort(
      (a, b) => a - b,
    );
    expect(xs[10_000]).toBeGreaterThan(9);
    expect(xs[10_000]).toBeLessThan(11);
    expect(xs[19_800]).toBeGreaterThan(80);
    expect(xs[19_800]).toBeLessThan(125);
  });
  it('builds a fault config from CLI flags', () => {
    expect(faultsFromFlags(['fixed:1', 'ListContainers=uniform:2:4'], ['PullImage=0.5:2'])).toEqual({
      default: { latency: { kind: 'fixed', ms: 1 } },
      rpcs: {
        ListContainers: { latency: { kind: 'uniform', minMs: 2, maxMs: 4 } },
        PullImage: { errorRate: 0.5, errorCode: 2 },
      },
    });
  });
});

describe('sigtermDisposition (what StopContainer’s SIGTERM does)', () => {
  it.each([
    [['sleep', '3600'], { kind: 'default' }],
    [['sh', '-c', 'trap "" TERM; while true; do sleep 1; done'], { kind: 'ignore' }],
    [['sh', '-c', "trap '' SIGTERM; sleep 9"], { kind: 'ignore' }],
    [['sh', '-c', 'trap "exit 3" TERM; sleep 9'], { kind: 'exit', code: 3 }],
    [['sh', '-c', 'trap - TERM; sleep 9'], { kind: 'default' }],
  ])('%j → %j', (argv, expected) => {
    expect(sigtermDisposition(argv)).toEqual(expected);
  });
});
