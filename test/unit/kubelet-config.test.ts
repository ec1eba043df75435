import { cpuCFSQuotaOf } from '../../src/main/cgroups/setup-pod-cgroups.js';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/common/errors.js';
import { main, parseCommandLine } from '../../src/main/cli.js';
import { FLAG_SPECS } from '../../src/main/config/flags.js';
import { parseFlags } from '../../src/main/config/flag-parser.js';
import { parseColonMultimap } from '../../src/main/config/parse-values.js';
import { DEFAULT_EVICTION_HARD, type KubeletConfig } from '../../src/main/config/kubelet-config.js';
import { defaultWorkerThreads } from '../../src/main/config/config-defaults.js';
import { resolveConfig, type ResolveEnv } from '../../src/main/config/load-config.js';

const FILE = '/etc/kubelet-ts/config.yaml';
const HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function env(fileBody?: string): ResolveEnv {
  return {
    cwd: '/etc/kubelet-ts',
    availableParallelism: 8,
    hostname: 'Node-A',
    readFile: (p) => {
      if (p !== FILE || fileBody === undefined) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
      return fileBody;
    },
  };
}

/** Resolves argv; `file` (the YAML body after apiVersion/kind) makes `--config config.yaml` implicit. */
function resolve(argv: string[], file?: string) {
  const args = file === undefined ? argv : ['--config', 'config.yaml', ...argv];
  return resolveConfig(args, env(file === undefined ? undefined : HEADER + file));
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  const upstream: Partial<KubeletConfig> = {
    syncFrequency: 60_000,
    fileCheckFrequency: 20_000,
    httpCheckFrequency: 20_000,
    port: 10250,
    healthzPort: 10248,
    healthzBindAddress: '127.0.0.1',
    address: '0.0.0.0',
    maxPods: 110,
    podPidsLimit: -1,
    runtimeRequestTimeout: 120_000,
    containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
    imageServiceEndpoint: 'unix:///run/containerd/containerd.sock',
    podLogsDir: '/var/log/pods',
    registerNode: true,
    nodeStatusUpdateFrequency: 10_000,
    nodeStatusReportFrequency: 300_000,
    nodeLeaseDurationSeconds: 40,
    imageMinimumGCAge: 120_000,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    evictionHard: { ...DEFAULT_EVICTION_HARD },
    enforceNodeAllocatable: ['pods'],
    serializeImagePulls: true,
    cgroupDriver: 'cgroupfs',
    resolvConf: '/etc/resolv.conf',
    hairpinMode: 'promiscuous-bridge',
    failSwapOn: true,
    localStorageCapacityIsolation: true,
    containerLogMaxSize: '10Mi',
    containerLogMaxFiles: 5,
    logging: { format: 'text', verbosity: 0 },
    rootDir: '/var/lib/kubelet',
    nodeName: 'node-a',
    workerThreads: 1, // maxPods 110: one worker
    relistMode: 'parallel',
    pleg: 'generic',
    runonce: false,
    configFile: '',
  };

  it('without --config: upstream defaults, readOnlyPort 10255 (legacy flag default)', () => {
    const { config, sources } = resolve([]);
    expect(config).toMatchObject(upstream);
    expect(config.readOnlyPort).toBe(10255);
    expect(Object.values(sources).every((s) => s === 'default')).toBe(true);
  });

  it('with --config: file defaults, readOnlyPort 0', () => {
    const { config, sources } = resolve([], '');
    expect(config).toMatchObject({ ...upstream, configFile: FILE });
    expect(config.readOnlyPort).toBe(0);
    expect(sources.syncFrequency).toBe('default');
  });

  it.each([
    // [CPUs, maxPods, threads]
    [1, 110, 1],
    [2, 110, 1],
    [2, 300, 1],
    [2, 301, 2],
    [2, 1100, 2],
    [4, 600, 2],
    [4, 1100, 4],
    [64, 5000, 4],
  ])('workerThreads default with %d CPUs and maxPods %d is %d', (cpus, maxPods, threads) => {
    expect(defaultWorkerThreads(cpus, maxPods)).toBe(threads);
    const flags = maxPods === 110 ? [] : [`--max-pods=${maxPods}`];
    expect(resolveConfig(flags, { ...env(), availableParallelism: cpus }).config.workerThreads).toBe(threads);
  });

  it('an explicit --worker-threads wins over the maxPods-based default', () => {
    expect(resolveConfig(['--max-pods=1100', '--worker-threads=1'], { ...env(), availableParallelism: 4 }).config.workerThreads).toBe(1);
  });
});

describe('config file', () => {
  it.each<[string, string, Partial<KubeletConfig>]>([
    [
      'durations parse to ms',
      'syncFrequency: 30s\nfileCheckFrequency: 1m30s\nhttpCheckFrequency: 0.5s',
      { syncFrequency: 30_000, fileCheckFrequency: 90_000, httpCheckFrequency: 500 },
    ],
    ['zero means default (upstream)', 'syncFrequency: 0s\nmaxPods: 0\nport: 0', { syncFrequency: 60_000, maxPods: 110, port: 10250 }],
    [
      'report frequency follows an explicit update frequency',
      'nodeStatusUpdateFrequency: 20s',
      { nodeStatusUpdateFrequency: 20_000, nodeStatusReportFrequency: 20_000 },
    ],
    [
      'maxParallelImagePulls > 1 turns serializeImagePulls off',
      'maxParallelImagePulls: 5',
      { maxParallelImagePulls: 5, serializeImagePulls: false },
    ],
    ['evictionHard replaces the defaults', 'evictionHard:\n  memory.available: 1Gi', { evictionHard: { 'memory.available': '1Gi' } }],
    [
      'mergeDefaultEvictionSettings merges them',
      'mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 1Gi',
      { evictionHard: { ...DEFAULT_EVICTION_HARD, 'memory.available': '1Gi' } },
    ],
    [
      'static pod URL headers',
      'staticPodURL: http://x/pods\nstaticPodURLHeader:\n  a: [hello]\n  b: [again, beautiful]',
      { staticPodURL: 'http://x/pods', staticPodURLHeader: { a: ['hello'], b: ['again', 'beautiful'] } },
    ],
    ['logging', 'logging:\n  format: json\n  verbosity: 3', { logging: { format: 'json', verbosity: 3 } }],
    ['negative podPidsLimit is -1', 'podPidsLimit: -7', { podPidsLimit: -1 }],
    [
      'imageServiceEndpoint follows the runtime endpoint',
      'containerRuntimeEndpoint: sim',
      { containerRuntimeEndpoint: 'sim', imageServiceEndpoint: 'sim' },
    ],
    ['JSON is accepted', '{}', {}],
  ])('%s', (_name, body, expected) => {
    const file = body === '{}' ? undefined : body;
    const config =
      file === undefined
        ? resolveConfig(['--config', FILE], {
            ...env(),
            readFile: () => '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration"}',
          }).config
        : resolve([], file).config;
    expect(config).toMatchObject(expected);
  });

  it('records which fields came from the file', () => {
    const { sources } = resolve([], 'maxPods: 50\nlogging:\n  verbosity: 2');
    expect(sources).toMatchObject({ maxPods: 'file', 'logging.verbosity': 'file', 'logging.format': 'default', port: 'default' });
  });

  it.each([
    ['wrong type', 'maxPods: "many"', /config\.yaml: maxPods: .*expected number/],
    ['number for a duration', 'syncFrequency: 20', /syncFrequency: expected a duration string/],
    ['bad duration', 'syncFrequency: 20x', /syncFrequency: invalid duration "20x": unknown unit "x"/],
    ['bad boolean', 'registerNode: "yes"', /registerNode: .*expected boolean/],
    ['bad threshold in a map', 'evictionHard:\n  memory.available: lots', /evictionHard\.memory\.available: invalid threshold "lots"/],
    ['unknown eviction signal', 'evictionHard:\n  disk.available: 1Gi', /evictionHard\.disk\.available: unknown eviction signal/],
    [
      'soft threshold without a grace period',
      'evictionSoft:\n  memory.available: 1Gi',
      /evictionSoft\.memory\.available: grace period must be specified for the soft eviction threshold memory\.available/,
    ],
    ['bad quantity', 'systemReserved:\n  memory: 1 GB', /systemReserved\.memory: invalid quantity/],
    ['bad enum', 'logging:\n  format: yaml', /logging\.format: .*"text"\|"json"/],
    ['unknown field', 'bogus: 1', /config\.yaml: bogus: unknown field/],
    ['unknown nested field', 'logging:\n  colour: red', /logging\.colour: unknown field$/m],
    ['a misspelt field, with the closest name', 'maxPod: 10', /config\.yaml: maxPod: unknown field; did you mean maxPods\?/],
    ['a misspelt nested field', 'authentication:\n  webhok: {}', /authentication\.webhok: unknown field; did you mean webhook\?/],
    [
      'a misspelt field of a list item',
      'registerWithTaints:\n- key: a\n  effect: NoSchedule\n  valu: b',
      /registerWithTaints\[0\]\.valu: unknown field; did you mean value\?/,
    ],
    [
      'bad IP in a list (range check)',
      'clusterDNS: [10.0.0.10, not-an-ip]',
      /config\.yaml: clusterDNS\[1\]: invalid IP address "not-an-ip"/,
    ],
    ['percent out of range', 'imageGCHighThresholdPercent: 150', /config\.yaml: imageGCHighThresholdPercent: must be between 0 and 100/],
    ['low >= high', 'imageGCLowThresholdPercent: 90', /imageGCLowThresholdPercent: must be less than imageGCHighThresholdPercent \(85\)/],
    [
      'low = high = 100 (refused by v1.20 too)',
      'imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 100',
      /imageGCLowThresholdPercent: must be less than imageGCHighThresholdPercent \(100\)/,
    ],
    ['port out of range', 'port: 70000', /config\.yaml: port: must be between 1 and 65535/],
    [
      'serialized pulls with parallelism',
      'serializeImagePulls: true\nmaxParallelImagePulls: 3',
      /maxParallelImagePulls: cannot be larger than 1/,
    ],
    ['none combined', 'enforceNodeAllocatable: [none, pods]', /enforceNodeAllocatable: "none" cannot be combined/],
    ['too few log files', 'containerLogMaxFiles: 1', /containerLogMaxFiles: must be at least 2/],
  ])('%s names the file and field', (_name, body, message) => {
    const err = errorOf(() => resolve([], body));
    expect(err.code).toBe('KTS_ERR_CONFIG');
    expect(err.message).toContain(FILE);
    expect(err.message).toMatch(message);
  });

  it('lists every problem at once', () => {
    const err = errorOf(() => resolve([], 'maxPods: x\nbogus: 1\nsyncFrequency: 1y'));
    expect(err.message).toMatch(/3 problems/);
    expect(err.message).toMatch(/maxPods/);
    expect(err.message).toMatch(/bogus: unknown field/);
    expect(err.message).toMatch(/syncFrequency/);
  });

  it.each([
    ['missing kind', 'apiVersion: kubelet.config.k8s.io/v1beta1\n', /kind: kind must be "KubeletConfiguration"/],
    ['wrong apiVersion', 'apiVersion: v1\nkind: KubeletConfiguration\n', /apiVersion: apiVersion must be "kubelet.config.k8s.io\/v1beta1"/],
    ['invalid YAML', 'a: [1, 2\n', /invalid YAML/],
    ['duplicate key', HEADER + 'maxPods: 1\nmaxPods: 2\n', /invalid YAML/],
    ['not an object', '- a\n- b\n', /expected a KubeletConfiguration object/],
    ['empty', '', /expected a KubeletConfiguration object/],
  ])('%s', (_name, text, message) => {
    const err = errorOf(() => resolveConfig(['--config', FILE], { ...env(), readFile: () => text }));
    expect(err.message).toMatch(message);
  });

  it('a missing file names the path', () => {
    const err = errorOf(() => resolveConfig(['--config', 'missing.yaml'], env()));
    expect(err.message).toMatch(/cannot read --config file \/etc\/kubelet-ts\/missing\.yaml: ENOENT/);
  });
});

describe('flags over the file', () => {
  const file = 'syncFrequency: 30s\nport: 11250\nregisterNode: false\nmaxPods: 50\nstaticPodURLHeader:\n  a: [from-file]';

  it('flag defaults do not override file values', () => {
    const { config, sources } = resolve([], file);
    expect(config).toMatchObject({ syncFrequency: 30_000, port: 11250, registerNode: false, maxPods: 50 });
    expect(sources).toMatchObject({ syncFrequency: 'file', port: 'file', registerNode: 'file' });
  });

  it.each<[string, string[], Partial<KubeletConfig>]>([
    ['duration', ['--sync-frequency=45s'], { syncFrequency: 45_000, port: 11250 }],
    ['int', ['--port', '12250'], { port: 12250, syncFrequency: 30_000 }],
    ['bool', ['--register-node=true'], { registerNode: true }],
    ['read-only port', ['--read-only-port=10255'], { readOnlyPort: 10255 }],
    ['map replaced, not merged', ['--manifest-url-header=b:flag'], { staticPodURLHeader: { b: ['flag'] } }],
    ['logging', ['--v=4', '--logging-format=json'], { logging: { format: 'json', verbosity: 4 } }],
  ])('explicit %s flag wins', (_name, argv, expected) => {
    const { config, sources } = resolve(argv, file);
    expect(config).toMatchObject(expected);
    const flagged = Object.entries(sources)
      .filter(([, s]) => s === 'flag')
      .map(([k]) => k);
    expect(flagged.length).toBeGreaterThan(0);
  });

  it('a flag range error names the flag', () => {
    expect(errorOf(() => resolve(['--port=0'], file)).message).toBe('flag --port: must be between 1 and 65535');
    expect(errorOf(() => resolve(['--max-pods=0'])).message).toBe('flag --max-pods: must be greater than 0');
    expect(errorOf(() => resolve(['--worker-threads=-1'])).message).toMatch(/^flag --worker-threads: must not be negative/);
    expect(errorOf(() => resolve(['--sync-frequency=0s'])).message).toBe('flag --sync-frequency: must be greater than 0');
    expect(errorOf(() => resolve(['--image-gc-period=0s'])).message).toBe('flag --image-gc-period: must be greater than 0');
    expect(errorOf(() => resolve(['--cluster-dns=1.2.3.4,nope'])).message).toMatch(/^flag --cluster-dns: invalid IP address "nope"/);
    expect(errorOf(() => resolve(['--eviction-hard=disk.available<1Gi'])).message).toMatch(
      /^flag --eviction-hard: unknown eviction signal "disk.available"/,
    );
    expect(errorOf(() => resolve(['--system-reserved=memory=lots'])).message).toMatch(/^flag --system-reserved: invalid quantity "lots"/);
    expect(errorOf(() => resolve(['--node-ip=10.0.0.1,bad'])).message).toMatch(/^flag --node-ip: invalid IP address list/);
    expect(errorOf(() => resolve(['--manifest-url=not a url'])).message).toMatch(/^flag --manifest-url: invalid URL/);
    expect(errorOf(() => resolve(['--logging-format=json', '--max-pods=0', '--port=0'])).message).toMatch(
      /invalid configuration: 2 problems:\n {2}- flag --port: .*\n {2}- flag --max-pods: /,
    );
  });
});

describe('flag forms', () => {
  it.each<[string[], Partial<KubeletConfig>]>([
    [['--register-node=false'], { registerNode: false }],
    [['--register-node'], { registerNode: true }],
    [['--register-node=true'], { registerNode: true }],
    [['--register-node', 'false'], { registerNode: false }],
    [['--register-node=0'], { registerNode: false }],
    [['--runonce=F'], { runonce: false }],
    [['--fail-swap-on=false', '--serialize-image-pulls=False'], { failSwapOn: false, serializeImagePulls: false }],
    [['-v', '3'], { logging: { format: 'text', verbosity: 3 } }],
    [['--v=5'], { logging: { format: 'text', verbosity: 5 } }],
    [['--worker-threads=0'], { workerThreads: 0 }],
    [['--relist-mode=serial', '--pleg=evented'], { relistMode: 'serial', pleg: 'evented' }],
    [['--image-gc-period=30s'], { imageGcPeriod: 30_000 }],
    [['--max-containers-per-pod=0'], { maxContainersPerPod: 0 }],
    [
      ['--image-gc-high-threshold=90', '--image-gc-low-threshold=70', '--minimum-image-ttl-duration=0s'],
      { imageGCHighThresholdPercent: 90, imageGCLowThresholdPercent: 70, imageMinimumGCAge: 0 },
    ],
    [['--container-runtime-endpoint=sim'], { containerRuntimeEndpoint: 'sim', imageServiceEndpoint: 'sim' }],
    [['--container-runtime-endpoint=sim', '--image-service-endpoint=unix:///img.sock'], { imageServiceEndpoint: 'unix:///img.sock' }],
    [['--hostname-override=Web-Node1'], { hostnameOverride: 'Web-Node1', nodeName: 'web-node1' }],
    [
      ['--pod-manifest-path=/etc/kubernetes/manifests', '--file-check-frequency=5s'],
      { staticPodPath: '/etc/kubernetes/manifests', fileCheckFrequency: 5_000 },
    ],
    [
      ['--eviction-hard=memory.available<1Gi,nodefs.available<5%'],
      { evictionHard: { 'memory.available': '1Gi', 'nodefs.available': '5%' } },
    ],
    [['--system-reserved=cpu=200m', '--system-reserved=memory=500Mi'], { systemReserved: { cpu: '200m', memory: '500Mi' } }],
    [['--cluster-dns=10.0.0.10', '--cluster-dns=10.0.0.11,fd00::a'], { clusterDNS: ['10.0.0.10', '10.0.0.11', 'fd00::a'] }],
    [['--node-labels=a=b,c=d'], { nodeLabels: { a: 'b', c: 'd' } }],
  ])('%j', (argv, expected) => {
    expect(resolve(argv).config).toMatchObject(expected);
  });

  it('--manifest-url-header follows upstream ColonSeparatedMultimapStringString', () => {
    const { config } = resolve(['--manifest-url-header', 'a:hello,b:again,c:world', '--manifest-url-header', 'b:beautiful']);
    expect(config.staticPodURLHeader).toEqual({ a: ['hello'], b: ['again', 'beautiful'], c: ['world'] });
    expect(parseColonMultimap(' k : v:with:colons ,,')).toEqual({ k: ['v:with:colons'] });
  });

  it.each([
    [['--bogus'], /^unknown flag: --bogus$/],
    [['--prot=1'], /^unknown flag: --prot \(did you mean --port\?\)/],
    [['--pod-manifest-pth', 'x'], /^unknown flag: --pod-manifest-pth \(did you mean --pod-manifest-path\?\)/],
    [['--root-dri=/x'], /^unknown flag: --root-dri \(did you mean --root-dir\?\)/],
    [['--register-node=maybe'], /^flag --register-node: invalid value "maybe": invalid boolean/],
    [['--port=abc'], /^flag --port: invalid value "abc": invalid integer/],
    [['--sync-frequency=10'], /^flag --sync-frequency: invalid value "10": invalid duration "10": missing unit/],
    [['--pleg=fancy'], /^flag --pleg: invalid value "fancy": Allowed choices are generic, evented/],
    [['--manifest-url-header=novalue'], /^flag --manifest-url-header: .*malformed pair "novalue", expect key:value/],
    [['--port'], /^flag needs an argument: --port/],
    [['stray'], /^unexpected positional arguments/],
  ])('%j fails naming the problem', (argv, message) => {
    expect(errorOf(() => resolve(argv)).message).toMatch(message);
  });
});

describe('cli', () => {
  const capture = () => {
    let text = '';
    return {
      write: (s: string) => (text += s),
      get text() {
        return text;
      },
    };
  };
  const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

  it('--help lists every flag with its default', () => {
    const result = parseFlags(['--help'], 'x');
    expect(result.kind).toBe('help');
    const text = result.kind === 'help' ? result.text.replace(/\s+/g, ' ') : '';
    for (const spec of FLAG_SPECS) {
      expect(text).toContain(`--${spec.name} `);
      expect(text).toContain(`(default: ${spec.defaultText})`);
    }
  });

  it('--help lists the flags that work first, then the explained and the refused upstream flags, and ends with three examples', () => {
    const result = parseFlags(['--help'], 'x');
    const text = result.kind === 'help' ? result.text : '';
    const headings = text.split('\n').filter((l) => /^\S.*:$/.test(l));
    expect(headings).toEqual([
      'Flags:',
      'Upstream flags accepted with no effect here (the start line says why):',
      'Upstream flags refused (the error says what to use instead):',
      'Examples:',
    ]);
    const section = (heading: string) => text.slice(text.indexOf(heading)).split('\n\n')[0];
    expect(section('Flags:')).toContain('--pod-manifest-path <path>');
    expect(section('Flags:')).toContain('--oom-score-adj'); // an honoured upstream flag
    expect(section('Upstream flags accepted')).toContain('--kernel-memcg-notification');
    expect(section('Upstream flags refused')).toContain('--cpu-manager-policy');
    const examples = text.slice(text.indexOf('Examples:'));
    expect(examples.split('\n').filter((l) => l.startsWith('  kubelet-ts '))).toHaveLength(3);
  });

  it('--version prints kubelet-ts v<package version> and exits 0', async () => {
    const stdout = capture();
    expect(await main(['--version'], { stdout })).toBe(0);
    expect(stdout.text).toBe(`kubelet-ts v${version}\n`);
  });

  it('a ConfigError prints "kubelet-ts: <message>" and exits 1', async () => {
    const stderr = capture();
    expect(await main(['--bogus'], { stderr })).toBe(1);
    expect(stderr.text).toMatch(/^kubelet-ts: unknown flag: --bogus/);
  });

  it('with --logging-format=json, a configuration error is one JSON line in upstream shape', async () => {
    const stderr = capture();
    expect(await main(['--logging-format=json', '--bogus', '--port=x'], { stderr })).toBe(1);
    const lines = stderr.text.trim().split('\n');
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(record).toMatchObject({ msg: 'Invalid configuration' });
    expect(record.err).toMatch(/unknown flag: --bogus[\s\S]*flag --port: invalid value "x"/);
    expect(typeof record.ts).toBe('number');
    expect(record).not.toHaveProperty('v');
  });

  it('a valid command line logs one line per explained setting and hands the config to run()', async () => {
    const log = capture();
    let seen: KubeletConfig | undefined;
    const code = await main(['--container-runtime-endpoint=sim', '--logging-format=json', '--hairpin-mode=hairpin-veth'], {
      env: env(),
      logDestination: log,
      run: async ({ config }) => {
        seen = config;
        return 7;
      },
    });
    expect(code).toBe(7);
    expect(seen?.containerRuntimeEndpoint).toBe('sim');
    const lines = log.text.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]) as Record<string, unknown>).toMatchObject({
      msg: 'Setting has no effect in kubelet-ts',
      setting: 'flag --hairpin-mode',
      value: 'hairpin-veth',
    });
  });

  it('parseCommandLine returns the resolved config without side effects', () => {
    const result = parseCommandLine(['--max-pods=250'], env());
    expect(result.kind).toBe('run');
    if (result.kind === 'run') expect(result.config.maxPods).toBe(250);
  });
});

describe('cgroup settings', () => {
  it.each<[string[], boolean]>([
    [[], true],
    [['--cpu-cfs-quota=false'], false],
    [['--cpu-cfs-quota=true'], true],
  ])('%j: cpuCFSQuota is %s', (argv, value) => {
    const result = parseCommandLine(argv, env());
    expect(result.kind).toBe('run');
    if (result.kind === 'run') expect(cpuCFSQuotaOf(result.config)).toBe(value);
  });

  it("cgroupsPerQOS defaults to true, as upstream's; the flag turns it off", () => {
    const on = parseCommandLine(['--cgroup-root=/kts'], env());
    const off = parseCommandLine(['--cgroups-per-qos=false'], env());
    expect(on.kind === 'run' && [on.config.cgroupsPerQOS, on.config.cgroupRoot, on.config.cgroupDriver]).toEqual([
      true,
      '/kts',
      'cgroupfs',
    ]);
    expect(off.kind === 'run' && off.config.cgroupsPerQOS).toBe(false);
  });
});
