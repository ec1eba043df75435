import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/common/errors.js';
import { allFlagSpecs, FLAG_SPECS } from '../../src/main/config/flags.js';
import { defaultKubeletConfig } from '../../src/main/config/config-defaults.js';
import { resolveConfig, type ResolveEnv } from '../../src/main/config/load-config.js';
import { configKey, isOther, UPSTREAM_SETTINGS } from '../../src/main/config/settings-catalog.js';
import { renderSettingsTables, withSettingsTables } from '../../src/main/config/settings-table.js';

const fixture = (name: string) => new URL(`../fixtures/kubelet-config/${name}`, import.meta.url);
const names = (file: string) =>
  readFileSync(fixture(file), 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'));

const FILE = '/etc/kubelet-ts/config.yaml';
const env = (body?: string): ResolveEnv => ({
  cwd: '/etc/kubelet-ts',
  availableParallelism: 2,
  hostname: 'node-a',
  readFile: (p) => {
    if (p === FILE && body !== undefined) return body;
    if (p.startsWith('/fixtures/')) return readFileSync(fixture(p.slice('/fixtures/'.length)), 'utf8');
    throw new Error(`ENOENT: no such file or directory, open '${p}'`);
  },
});
const HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('the settings catalog covers upstream', () => {
  const fields = new Set(UPSTREAM_SETTINGS.flatMap((s) => s.field ?? []));
  const flags = new Set(UPSTREAM_SETTINGS.flatMap((s) => s.flag ?? []));

  it('has every KubeletConfiguration v1beta1 field of v1.20 and current upstream', () => {
    const upstream = names('upstream-v1beta1-fields.txt');
    expect(upstream.length).toBeGreaterThan(130);
    expect(upstream.filter((f) => !fields.has(f))).toEqual([]);
    expect([...fields].filter((f) => !upstream.includes(f))).toEqual([]);
  });

  it('has every flag of the upstream v1.20.2 kubelet', () => {
    const upstream = names('upstream-v1.20.2-flags.txt').filter((f) => f !== 'help' && f !== 'version');
    expect(upstream.length).toBeGreaterThan(180);
    expect(upstream.filter((f) => !flags.has(f))).toEqual([]);
  });

  it('lists each field and flag once', () => {
    const f = UPSTREAM_SETTINGS.flatMap((s) => s.field ?? []);
    const g = UPSTREAM_SETTINGS.flatMap((s) => s.flag ?? []);
    expect(f.length).toBe(new Set(f).size);
    expect(g.length).toBe(new Set(g).size);
  });

  it('kubelet-ts models every setting it does not keep in otherSettings, and each upstream flag parses', () => {
    const defaults = defaultKubeletConfig({ withConfigFile: true, availableParallelism: 2, hostname: 'n' }) as unknown as Record<
      string,
      unknown
    >;
    const has = (path: string) => {
      let o: unknown = defaults;
      for (const p of path.split('.')) {
        if (o === null || typeof o !== 'object' || !(p in o)) return false;
        o = (o as Record<string, unknown>)[p];
      }
      return true;
    };
    expect(UPSTREAM_SETTINGS.filter((s) => !isOther(s) && !has(configKey(s))).map((s) => s.field ?? s.flag)).toEqual([]);
    const specNames = new Set(allFlagSpecs().map((s) => s.name));
    expect([...flags].filter((f) => !specNames.has(f))).toEqual([]);
    // kubelet-ts's own flags that upstream does not have.
    expect(FLAG_SPECS.filter((s) => !flags.has(s.name)).map((s) => s.name)).toEqual([
      'worker-threads',
      'relist-mode',
      'image-gc-period',
      'max-containers-per-pod',
      'pleg',
      'pod-logs-dir',
      'container-logs-dir',
    ]);
  });

  it('docs/configuration.md carries the generated tables', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(withSettingsTables(doc)).toBe(doc);
    const tables = renderSettingsTables();
    for (const s of UPSTREAM_SETTINGS) expect(tables).toContain(s.field ? `| \`${s.field}\` |` : `| \`--${s.flag}\` |`);
  });
});

describe('explained and refused settings', () => {
  const resolve = (argv: string[], body?: string) =>
    resolveConfig(body === undefined ? argv : ['--config', 'config.yaml', ...argv], env(body === undefined ? undefined : HEADER + body));

  it.each<[string, string[], string | undefined, string, unknown]>([
    ['a modelled field in the file', [], 'hairpinMode: hairpin-veth', 'hairpinMode', 'hairpin-veth'],
    ['an unmodelled field in the file', [], 'rotateCertificates: true', 'rotateCertificates', true],
    ['a nested unmodelled field', [], 'logging:\n  flushFrequency: 10s', 'logging.flushFrequency', 10_000],
    [
      'an unmodelled flag',
      ['--pod-infra-container-image=registry.k8s.io/pause:3.2'],
      undefined,
      'flag --pod-infra-container-image',
      'registry.k8s.io/pause:3.2',
    ],
    [
      'a modelled flag without a kubelet-ts spec',
      ['--kernel-memcg-notification=true'],
      undefined,
      'flag --kernel-memcg-notification',
      true,
    ],
    [
      'a changed feature gate',
      ['--feature-gates=CSIMigration=false,AppArmor=true'],
      undefined,
      'flag --feature-gates',
      'CSIMigration=false',
    ],
  ])('%s gets one startup line', (_name, argv, body, name, value) => {
    const { explained } = resolve(argv, body);
    expect(explained).toEqual([expect.objectContaining({ name, value })]);
  });

  it.each<[string, string[], string | undefined]>([
    [
      'neutral values of kubeadm',
      [],
      'cpuManagerReconcilePeriod: 0s\nstreamingConnectionIdleTimeout: 0s\nmemorySwap: {}\nlogging:\n  flushFrequency: 0',
    ],
    ['a refused field at its neutral value', [], 'cpuManagerPolicy: none\ntopologyManagerScope: container'],
    ['a refused flag at its neutral value', ['--cloud-provider=external', '--register-schedulable=true'], undefined],
    ['gates at their default', ['--feature-gates=AppArmor=true'], undefined],
  ])('%s: accepted silently', (_name, argv, body) => {
    expect(resolve(argv, body).explained).toEqual([]);
  });

  it.each<[string, string[], string | undefined, RegExp]>([
    [
      'a refused field',
      [],
      'cpuManagerPolicy: static',
      /config\.yaml: cpuManagerPolicy: not supported by kubelet-ts: the CPU manager is not built; use "none"/,
    ],
    [
      'a refused nested field',
      [],
      'memorySwap:\n  swapBehavior: LimitedSwap',
      /memorySwap\.swapBehavior: not supported by kubelet-ts: swap for pods/,
    ],
    ['a refused flag', ['--runonce'], undefined, /^flag --runonce: not supported by kubelet-ts: run-once mode is not built/],
    [
      'a refused flag-only flag',
      ['--docker-endpoint=unix:///d.sock'],
      undefined,
      /^flag --docker-endpoint: not supported by kubelet-ts: dockershim is not built/,
    ],
    [
      'a refused modelled field',
      [],
      'shutdownGracePeriod: 30s',
      /shutdownGracePeriod: not supported by kubelet-ts: graceful node shutdown/,
    ],
    ['a wrong type for an unmodelled field', [], 'tlsMinVersion: 12', /tlsMinVersion: .*expected string/],
    ['an unknown nested field of an unmodelled group', [], 'memorySwap:\n  swapLimit: 1', /memorySwap\.swapLimit: unknown field/],
  ])('%s is an error naming it', (_name, argv, body, message) => {
    expect(errorOf(() => resolve(argv, body))).toMatch(message);
  });

  it('reports every flag and field problem together', () => {
    const message = errorOf(() =>
      resolve(
        ['--bogus', 'x', '--port=abc', '--cpu-manager-policy=static', '--feature-gates=NoSuchGate=true', '--prot=1', 'stray', '--max-pods'],
        'maxPods: many\nbogusField: 1\nserverTLSBootstrap: true\n',
      ),
    );
    const lines = message.split('\n');
    expect(lines[0]).toMatch(/invalid configuration: 9 problems:/);
    for (const re of [
      /unknown flag: --bogus/,
      /unknown flag: --prot \(did you mean --port\?\)/,
      /flag --port: invalid value "abc": invalid integer/,
      /flag needs an argument: --max-pods/,
      /unexpected positional arguments \["stray"\]/,
      /config\.yaml: maxPods: .*expected number/,
      /config\.yaml: bogusField: unknown field/,
      /flag --cpu-manager-policy: not supported/,
      /flag --feature-gates: unrecognized feature gate: NoSuchGate/,
    ]) {
      expect(lines.some((l) => re.test(l))).toBe(true);
    }
  });
});

describe('--feature-gates and featureGates', () => {
  const gates = (argv: string[]) => resolveConfig(argv, env()).config.featureGates;

  it.each<[string[], Record<string, boolean>]>([
    [['--feature-gates=AppArmor=true,CSIMigration=false'], { AppArmor: true, CSIMigration: false }],
    [['--feature-gates', ' AppArmor = T ,,CSIMigration=0'], { AppArmor: true, CSIMigration: false }],
    [['--feature-gates=AppArmor=true', '--feature-gates=CSIMigration=false'], { AppArmor: true, CSIMigration: false }],
    [['--feature-gates=AllAlpha=false'], { AllAlpha: false }],
  ])('%j', (argv, expected) => {
    expect(gates(argv)).toEqual(expected);
  });

  it.each<[string[], string | undefined, RegExp]>([
    [['--feature-gates=AppArmor'], undefined, /flag --feature-gates: invalid value "AppArmor": missing bool value for AppArmor/],
    [['--feature-gates=AppArmor=yes'], undefined, /invalid value of AppArmor=yes/],
    [
      ['--feature-gates=Bogus=true,AlsoBogus=false'],
      undefined,
      /unrecognized feature gate: Bogus[\s\S]*unrecognized feature gate: AlsoBogus/,
    ],
    [['--feature-gates=BlockVolume=false'], undefined, /cannot set feature gate BlockVolume to false, feature is locked to true/],
    [[], 'featureGates:\n  Bogus: true', /config\.yaml: featureGates: unrecognized feature gate: Bogus/],
  ])('%j %j is an error', (argv, body, message) => {
    const args = body === undefined ? argv : ['--config', 'config.yaml', ...argv];
    expect(errorOf(() => resolveConfig(args, env(body === undefined ? undefined : HEADER + body)))).toMatch(message);
  });
});

describe('kubeadm and kind default configurations', () => {
  it.each([
    ['kubeadm-default.yaml', [], ['rotateCertificates']],
    [
      'kind-default.yaml',
      ['--node-ip=172.18.0.2', '--node-labels=ingress-ready=true', '--provider-id=kind://docker/kind/kind-control-plane'],
      ['rotateCertificates'],
    ],
  ])('%s resolves; its explained settings are named', (file, flags, explained) => {
    const { config, explained: lines } = resolveConfig(['--config', `/fixtures/${file}`, ...flags], env());
    expect(config).toMatchObject({ staticPodPath: '/etc/kubernetes/manifests', clusterDomain: 'cluster.local', syncFrequency: 60_000 });
    expect(config.authorization.mode).toBe('Webhook');
    expect(lines.map((l) => l.name).sort()).toEqual([...explained].sort());
  });
});
