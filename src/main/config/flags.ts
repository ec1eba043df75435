/**
 * The kubelet-ts command line (commander@14), with upstream kubelet flag names.
 *
 * Contract:
 * - `parseFlags` reports only flags the user actually set; flag defaults shown
 *   in --help are documentation, applied by load-config.ts, so that a default
 *   never overrides a --config file value (as upstream).
 * - Values are converted here (durations to ms, ints, Kubernetes-style bools,
 *   maps); a bad value is a ConfigError naming the flag.
 * - Repeatable map/list flags follow pflag: the first use replaces the
 *   default/file value, later uses add to it.
 * - The program is built fresh per call: commander keeps state between parses.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../../common/errors.js';
import { parseDuration } from './duration.js';
import {
  CGROUP_DRIVERS,
  HAIRPIN_MODES,
  LOGGING_FORMATS,
  PLEG_MODES,
  RELIST_MODES,
  TAINT_EFFECTS,
  type KubeletConfig,
  type TaintSpec,
} from './kubelet-config.js';
import { SERVER_FLAG_SPECS, type ServerNestedKey } from './server-config.js';

/** A resolved-config key a flag writes; logging sub-fields are dotted. */
export type FlagTarget =
  | Exclude<keyof KubeletConfig, 'logging' | 'nodeName' | 'authentication' | 'authorization'>
  | 'logging.format'
  | 'logging.verbosity'
  | ServerNestedKey;

type FlagKind = 'string' | 'duration' | 'int' | 'bool' | 'enum' | 'colonMultimap' | 'list' | 'langleMap' | 'map' | 'taints';

export interface FlagSpec {
  /** Long name without dashes, e.g. 'sync-frequency'. */
  readonly name: string;
  readonly short?: string;
  readonly target: FlagTarget;
  readonly kind: FlagKind;
  /** Value placeholder in --help. */
  readonly arg: string;
  readonly help: string;
  /** The default as shown in --help. */
  readonly defaultText: string;
  readonly choices?: readonly string[];
}

const spec = (
  name: string,
  target: FlagTarget,
  kind: FlagKind,
  arg: string,
  defaultText: string,
  help: string,
  extra: { short?: string; choices?: readonly string[] } = {},
): FlagSpec => ({ name, target, kind, arg, defaultText, help, ...extra });

/** Every flag, in --help order. docs/configuration.md mirrors this table. */
export const FLAG_SPECS: readonly FlagSpec[] = [
  spec(
    'config',
    'configFile',
    'string',
    'path',
    '""',
    'Load the initial configuration from this KubeletConfiguration file. Command-line flags that are explicitly set override it.',
  ),
  spec('kubeconfig', 'kubeconfig', 'string', 'path', '""', 'Path to a kubeconfig file for the API server. Omit it to run standalone.'),
  spec(
    'bootstrap-kubeconfig',
    'bootstrapKubeconfig',
    'string',
    'path',
    '""',
    'Kubeconfig used to request a client certificate (TLS bootstrap) when --kubeconfig does not exist yet; the issued certificate goes to --cert-dir and --kubeconfig is written to point at it.',
  ),
  spec(
    'cert-dir',
    'certDir',
    'string',
    'path',
    '<root-dir>/pki',
    'Directory of the TLS certificates (the bootstrapped client certificate).',
  ),
  spec('kube-api-qps', 'kubeAPIQPS', 'int', 'qps', '50', 'QPS to use while talking with the apiserver.'),
  spec('kube-api-burst', 'kubeAPIBurst', 'int', 'n', '100', 'Burst to use while talking with the apiserver.'),
  spec('event-qps', 'eventRecordQPS', 'int', 'qps', '50', 'Events the kubelet may send per second (0 = unlimited).'),
  spec('event-burst', 'eventBurst', 'int', 'n', '100', 'Maximum size of a burst of event records (with --event-qps > 0).'),
  spec(
    'hostname-override',
    'hostnameOverride',
    'string',
    'name',
    '"" (OS hostname)',
    'Use this name as the node name instead of the hostname.',
  ),
  spec('node-ip', 'nodeIp', 'string', 'ips', '"" (auto-detect)', 'IP address (or comma-separated dual-stack addresses) of the node.'),
  spec('node-labels', 'nodeLabels', 'map', 'key=value,...', '""', 'Labels to add when registering the node (repeatable).'),
  spec('root-dir', 'rootDir', 'string', 'path', '/var/lib/kubelet', 'Directory for kubelet files.'),
  spec('runonce', 'runonce', 'bool', 'bool', 'false', 'Exit after spawning pods from static pod files or remote URLs.'),
  spec('v', 'logging.verbosity', 'int', 'level', '0', 'Log verbosity (klog-style; 4 enables debug, 5 trace).', { short: 'v' }),
  spec('logging-format', 'logging.format', 'enum', 'format', 'text', 'Log format.', { choices: LOGGING_FORMATS }),
  spec(
    'worker-threads',
    'workerThreads',
    'int',
    'n',
    'min(4, available parallelism)',
    'Worker threads for runtime calls and decoding; 0 = inline mode (no worker threads).',
  ),
  spec('relist-mode', 'relistMode', 'enum', 'mode', 'parallel', 'How PLEG relists sandboxes and containers.', { choices: RELIST_MODES }),
  spec('pleg', 'pleg', 'enum', 'mode', 'generic', 'Pod lifecycle event generator.', { choices: PLEG_MODES }),

  spec(
    'pod-manifest-path',
    'staticPodPath',
    'string',
    'path',
    '""',
    'Directory of static pod files, or a single static pod file. Files starting with dots are ignored.',
  ),
  spec('manifest-url', 'staticPodURL', 'string', 'url', '""', 'URL for additional pod specifications to run.'),
  spec(
    'manifest-url-header',
    'staticPodURLHeader',
    'colonMultimap',
    'key:value,...',
    '""',
    "HTTP headers for --manifest-url, comma-separated key:value pairs; repeatable, and repeated names keep their order, e.g. --manifest-url-header 'a:hello,b:again' --manifest-url-header 'b:beautiful'.",
  ),
  spec(
    'sync-frequency',
    'syncFrequency',
    'duration',
    'duration',
    '1m0s',
    'Max period between synchronizing running containers and config.',
  ),
  spec(
    'file-check-frequency',
    'fileCheckFrequency',
    'duration',
    'duration',
    '20s',
    'Duration between checking static pod files for new data.',
  ),
  spec(
    'http-check-frequency',
    'httpCheckFrequency',
    'duration',
    'duration',
    '20s',
    'Duration between checking the manifest URL for new data.',
  ),

  spec(
    'container-runtime-endpoint',
    'containerRuntimeEndpoint',
    'string',
    'endpoint',
    'unix:///run/containerd/containerd.sock',
    "CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock; 'sim' runs the embedded simulated runtime.",
  ),
  spec(
    'image-service-endpoint',
    'imageServiceEndpoint',
    'string',
    'endpoint',
    '"" (same as --container-runtime-endpoint)',
    'CRI image service endpoint.',
  ),
  spec(
    'runtime-request-timeout',
    'runtimeRequestTimeout',
    'duration',
    'duration',
    '2m0s',
    'Timeout of runtime requests except long-running ones (pull, logs, exec, attach).',
  ),
  spec('pod-logs-dir', 'podLogsDir', 'string', 'path', '/var/log/pods', 'Directory for container logs (config field podLogsDir).'),
  spec(
    'container-log-max-size',
    'containerLogMaxSize',
    'string',
    'quantity',
    '10Mi',
    'Maximum size of a container log file before it is rotated.',
  ),
  spec('container-log-max-files', 'containerLogMaxFiles', 'int', 'n', '5', 'Maximum number of log files per container (>= 2).'),

  spec('enable-server', 'enableServer', 'bool', 'bool', 'true', "Enable the kubelet's server."),
  spec('address', 'address', 'string', 'ip', '0.0.0.0', 'IP address for the kubelet server.'),
  spec('port', 'port', 'int', 'port', '10250', 'Port for the kubelet server.'),
  spec(
    'read-only-port',
    'readOnlyPort',
    'int',
    'port',
    '10255 without --config, 0 with --config',
    'Read-only port without authentication (0 = disabled).',
  ),
  ...SERVER_FLAG_SPECS,
  spec('healthz-port', 'healthzPort', 'int', 'port', '10248', 'Port of the healthz endpoint (0 = disabled).'),
  spec('healthz-bind-address', 'healthzBindAddress', 'string', 'ip', '127.0.0.1', 'IP address for the healthz server.'),

  spec('max-pods', 'maxPods', 'int', 'n', '110', 'Number of pods that can run on this node.'),
  spec('pod-max-pids', 'podPidsLimit', 'int', 'n', '-1', 'Maximum number of processes per pod; -1 = node allocatable pid capacity.'),
  spec(
    'register-with-taints',
    'registerWithTaints',
    'taints',
    'key=value:Effect,...',
    '""',
    'Register the node with these taints (comma-separated key=value:Effect; ignored if --register-node is false).',
  ),
  spec(
    'node-status-max-images',
    'nodeStatusMaxImages',
    'int',
    'n',
    '50',
    'Maximum number of images reported in the node status (-1 = no cap).',
  ),
  spec('register-node', 'registerNode', 'bool', 'bool', 'true', 'Register the node with the API server (needs --kubeconfig).'),
  spec(
    'node-status-update-frequency',
    'nodeStatusUpdateFrequency',
    'duration',
    'duration',
    '10s',
    'How often the node status is computed and posted when changed.',
  ),

  spec(
    'minimum-image-ttl-duration',
    'imageMinimumGCAge',
    'duration',
    'duration',
    '2m0s',
    'Minimum age of an unused image before it is garbage collected.',
  ),
  spec(
    'image-gc-high-threshold',
    'imageGCHighThresholdPercent',
    'int',
    'percent',
    '85',
    'Disk usage percent above which image GC always runs (0-100).',
  ),
  spec(
    'image-gc-low-threshold',
    'imageGCLowThresholdPercent',
    'int',
    'percent',
    '80',
    'Disk usage percent image GC frees down to (0-100, below the high threshold).',
  ),
  spec('serialize-image-pulls', 'serializeImagePulls', 'bool', 'bool', 'true', 'Pull images one at a time.'),
  spec(
    'eviction-hard',
    'evictionHard',
    'langleMap',
    'signal<threshold,...',
    'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%',
    'Hard eviction thresholds (repeatable).',
  ),
  spec(
    'system-reserved',
    'systemReserved',
    'map',
    'resource=quantity,...',
    '""',
    'Resources reserved for non-Kubernetes components, e.g. cpu=200m,memory=500Mi (repeatable).',
  ),
  spec(
    'kube-reserved',
    'kubeReserved',
    'map',
    'resource=quantity,...',
    '""',
    'Resources reserved for Kubernetes system components (repeatable).',
  ),
  spec(
    'enforce-node-allocatable',
    'enforceNodeAllocatable',
    'list',
    'levels',
    'pods',
    "Comma-separated node allocatable enforcement levels: 'none', 'pods', 'system-reserved', 'kube-reserved'.",
  ),

  spec('cgroup-driver', 'cgroupDriver', 'enum', 'driver', 'cgroupfs', 'Cgroup driver; must match the runtime.', {
    choices: CGROUP_DRIVERS,
  }),
  spec('fail-swap-on', 'failSwapOn', 'bool', 'bool', 'true', 'Fail to start if swap is enabled on the node.'),
  spec(
    'cluster-dns',
    'clusterDNS',
    'list',
    'ips',
    '""',
    'Comma-separated cluster DNS server IPs for dnsPolicy=ClusterFirst pods (repeatable).',
  ),
  spec('cluster-domain', 'clusterDomain', 'string', 'domain', '""', 'Cluster domain added to container DNS search paths.'),
  spec('resolv-conf', 'resolvConf', 'string', 'path', '/etc/resolv.conf', 'Resolver configuration used as the basis for container DNS.'),
  spec('hairpin-mode', 'hairpinMode', 'enum', 'mode', 'promiscuous-bridge', 'How the kubelet sets up hairpin NAT.', {
    choices: HAIRPIN_MODES,
  }),
];

// ---------------------------------------------------------------------------
// Value parsers (exported for tests and reuse)

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Go strconv.ParseBool, as pflag uses it. Throws on anything else. */
export function parseBool(value: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new Error(`invalid boolean ${JSON.stringify(value)} (use true or false)`);
}

/** A base-10 integer within the safe range. */
export function parseInteger(value: string): number {
  if (!/^[+-]?[0-9]+$/.test(value.trim())) throw new Error(`invalid integer ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`integer ${value} is out of range`);
  return n;
}

/** Splits "k<sep>v,k<sep>v" pairs; empty pairs are skipped, a pair without sep is an error. */
function pairs(value: string, sep: string, expect: string): [string, string][] {
  const out: [string, string][] = [];
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf(sep);
    if (at < 0) throw new Error(`malformed pair ${JSON.stringify(pair)}, expect ${expect}`);
    out.push([pair.slice(0, at).trim(), pair.slice(at + 1).trim()]);
  }
  return out;
}

/** Upstream ColonSeparatedMultimapStringString: 'a:hello,b:again' appended into `into`. */
export function parseColonMultimap(value: string, into: Record<string, string[]> = {}): Record<string, string[]> {
  for (const [k, v] of pairs(value, ':', 'key:value')) (into[k] ??= []).push(v);
  return into;
}

/** Upstream MapStringString: 'k=v,k2=v2' merged into `into`. */
export function parseKeyValueMap(value: string, into: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of pairs(value, '=', 'key=value')) into[k] = v;
  return into;
}

/** Upstream LangleSeparatedMapStringString: 'memory.available<100Mi,...' merged into `into`. */
export function parseLangleMap(value: string, into: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of pairs(value, '<', 'signal<threshold')) into[k] = v;
  return into;
}

/** Upstream ParseTaints: 'key=value:Effect' or 'key:Effect', comma-separated, appended. */
export function parseTaints(value: string, into: TaintSpec[] = []): TaintSpec[] {
  for (const item of value.split(',')) {
    const text = item.trim();
    if (text === '') continue;
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new Error(`invalid taint ${JSON.stringify(text)}: expect key=value:Effect or key:Effect`);
    const effect = text.slice(colon + 1);
    if (!(TAINT_EFFECTS as readonly string[]).includes(effect)) {
      throw new Error(`invalid taint effect ${JSON.stringify(effect)} in ${JSON.stringify(text)} (valid: ${TAINT_EFFECTS.join(', ')})`);
    }
    const kv = text.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = eq < 0 ? kv : kv.slice(0, eq);
    if (key === '') throw new Error(`invalid taint ${JSON.stringify(text)}: empty key`);
    const e = effect as TaintSpec['effect'];
    into.push(eq < 0 ? { key, effect: e } : { key, value: kv.slice(eq + 1), effect: e });
  }
  return into;
}

/** Upstream StringSlice: comma-separated, appended. */
export function parseList(value: string, into: string[] = []): string[] {
  for (const item of value.split(',')) if (item.trim() !== '') into.push(item.trim());
  return into;
}

function argParserFor(kind: FlagKind): ((value: string, previous: unknown) => unknown) | undefined {
  const wrap =
    <T>(fn: (value: string, previous: T | undefined) => T) =>
    (value: string, previous: unknown): T => {
      try {
        return fn(value, previous as T | undefined);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    };
  switch (kind) {
    case 'string':
    case 'enum':
      return undefined;
    case 'duration':
      return wrap((v) => parseDuration(v));
    case 'int':
      return wrap((v) => parseInteger(v));
    case 'bool':
      return wrap((v) => parseBool(v));
    case 'colonMultimap':
      return wrap((v, prev: Record<string, string[]> | undefined) => parseColonMultimap(v, prev));
    case 'map':
      return wrap((v, prev: Record<string, string> | undefined) => parseKeyValueMap(v, prev));
    case 'langleMap':
      return wrap((v, prev: Record<string, string> | undefined) => parseLangleMap(v, prev));
    case 'list':
      return wrap((v, prev: string[] | undefined) => parseList(v, prev));
    case 'taints':
      return wrap((v, prev: TaintSpec[] | undefined) => parseTaints(v, prev));
    default: {
      const never: never = kind;
      throw new Error(`unhandled flag kind ${String(never)}`);
    }
  }
}

/** Builds a fresh commander program for kubelet-ts. Output goes to the given writers. */
export function buildProgram(versionText: string, out: { writeOut: (s: string) => void; writeErr: (s: string) => void }): Command {
  const program = new Command('kubelet-ts')
    .description('kubelet-ts: a Kubernetes node agent (kubelet) in TypeScript.')
    .usage('[flags]')
    .helpOption('-h, --help', 'Show this help and exit.')
    .version(versionText, '--version', 'Print version information and exit.')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: out.writeOut, writeErr: out.writeErr, outputError: () => {} });
  for (const s of FLAG_SPECS) {
    const flags = `${s.short ? `-${s.short}, ` : ''}--${s.name} ${s.kind === 'bool' ? `[${s.arg}]` : `<${s.arg}>`}`;
    const opt = new Option(flags, `${s.help} (default: ${s.defaultText})`);
    if (s.kind === 'bool') opt.preset('true');
    if (s.choices) opt.choices(s.choices);
    const parser = argParserFor(s.kind);
    if (parser) opt.argParser(parser);
    program.addOption(opt);
  }
  return program;
}

/** Flags the user explicitly set, converted to config values. */
export interface ParsedFlags {
  values: Partial<Record<FlagTarget, unknown>>;
  /** target → '--flag-name', for every explicitly set flag. */
  flagOf: Map<FlagTarget, string>;
}

export type FlagParseResult = { kind: 'help'; text: string } | { kind: 'version'; text: string } | { kind: 'flags'; flags: ParsedFlags };

/**
 * Parses argv (without node and script). Returns help/version text instead of
 * printing it; throws ConfigError for unknown flags, bad values and stray arguments.
 */
export function parseFlags(argv: readonly string[], versionText: string): FlagParseResult {
  let stdout = '';
  const program = buildProgram(versionText, { writeOut: (s) => (stdout += s), writeErr: () => {} });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return { kind: 'help', text: stdout };
      if (err.code === 'commander.version') return { kind: 'version', text: stdout };
      throw new ConfigError(`${describeCommanderError(err.message)} (see --help)`, { cause: err });
    }
    throw err;
  }
  const opts = program.opts<Record<string, unknown>>();
  const values: Partial<Record<FlagTarget, unknown>> = {};
  const flagOf = new Map<FlagTarget, string>();
  for (const opt of program.options) {
    const key = opt.attributeName();
    const s = FLAG_SPECS.find((f) => f.name === opt.long?.slice(2));
    if (!s || program.getOptionValueSource(key) !== 'cli') continue;
    let value = opts[key];
    if (s.kind === 'bool' && typeof value === 'string') value = parseBool(value); // the preset
    values[s.target] = value;
    flagOf.set(s.target, `--${s.name}`);
  }
  return { kind: 'flags', flags: { values, flagOf } };
}

/** Rewrites commander's wording into pflag-like messages that lead with the flag. */
function describeCommanderError(message: string): string {
  const text = message.replace(/^error: /, '');
  const invalid = /^option '(-[^ ,']+(?:, )?)?(--[^ ']+)[^']*' argument '(.*)' is invalid\. ([\s\S]*)$/.exec(text);
  if (invalid) return `flag ${invalid[2]}: invalid value ${JSON.stringify(invalid[3])}: ${invalid[4]}`;
  const unknown = /^unknown option '([^']+)'([\s\S]*)$/.exec(text);
  if (unknown) return `unknown flag: ${unknown[1].split('=')[0]}${unknown[2].replace(/\s+/g, ' ').trimEnd()}`;
  if (/^too many arguments/.test(text)) return `unexpected positional arguments: kubelet-ts takes only flags`;
  const missing = /^option '(-[^ ,']+(?:, )?)?(--[^ ']+)[^']*' argument missing$/.exec(text);
  if (missing) return `flag needs an argument: ${missing[2]}`;
  return text;
}
