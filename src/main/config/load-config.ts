/**
 * Resolves the kubelet-ts configuration: built-in defaults, then the
 * KubeletConfiguration file named by --config, then the flags that were
 * explicitly set on the command line (as upstream: set flags win, flag
 * defaults never override file values).
 *
 * readOnlyPort (follows upstream cmd/kubelet/app/options applyLegacyDefaults):
 * without --config its default is 10255, the legacy flag default; with --config
 * it is the file default, 0 (disabled). An explicit --read-only-port wins either way.
 *
 * Every problem is a ConfigError whose message names where it came from: the
 * file and field path (`evictionHard.memory.available`) or the flag.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseDocument } from 'yaml';
import * as z from 'zod';
import { ConfigError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { didYouMean } from '../../common/did-you-mean.js';
import { GO_YAML_OPTIONS, goYamlToJson } from '../../common/yaml-go.js';
import { parseFlags, type ParsedFlags } from './flag-parser.js';
import type { FlagTarget } from './flags.js';
import {
  ENFORCE_NODE_ALLOCATABLE,
  EvictionThresholdsSchema,
  KubeletConfigurationFileSchema,
  LOGGING_FORMATS,
  PLEG_MODES,
  QuantitySchema,
  RELIST_MODES,
  ReservedResourcesSchema,
  applyConfigFile,
  type KubeletConfig,
  type KubeletConfigurationFile,
} from './kubelet-config.js';
import { defaultKubeletConfig, defaultWorkerThreads } from './config-defaults.js';
import { AUTHORIZATION_MODES, SERVER_NESTED_KEYS, setPath } from './server-config.js';
import { assessSettings } from './settings-catalog.js';
import { objectKeysAt } from './schema-keys.js';

export type ConfigSource = 'default' | 'file' | 'flag';

/** Settings whose sources are tracked per nested field (dotted keys). */
const NESTED = new Set(['logging', 'authentication', 'authorization']);

/**
 * Where each setting came from, keyed by KubeletConfig field name; nested
 * settings by their dotted path ('logging.format', 'authentication.webhook.enabled').
 */
export type ConfigSources = Record<string, ConfigSource>;

/** Host facts, injectable for tests. Not process.env: kubelet-ts reads no environment variables. */
export interface ResolveEnv {
  /** Base for a relative --config path. Default process.cwd(). */
  cwd?: string;
  readFile?: (absolutePath: string) => string;
  /** Default os.availableParallelism(). */
  availableParallelism?: number;
  /** Default os.hostname(). */
  hostname?: string;
}

/** Parses argv and resolves the config. Throws ConfigError; --help/--version belong to cli.ts's parseCommandLine. */
export function resolveConfig(argv: readonly string[], env: ResolveEnv = {}): ResolvedConfig {
  const parsed = parseFlags(argv, '');
  if (parsed.kind !== 'flags') {
    throw new ConfigError(`--${parsed.kind} does not resolve to a configuration; use parseCommandLine() from cli.ts`);
  }
  return resolveFromFlags(parsed.flags, env);
}

/** What resolution found that the agent logs at start (settings accepted without effect). */
export interface ResolvedConfig {
  config: KubeletConfig;
  sources: ConfigSources;
  /** One startup line each: explained settings set to a value upstream would act on. */
  explained: { name: string; value: unknown; message: string }[];
}

/**
 * Resolves defaults ← file ← explicitly set flags, then validates the result.
 * Every problem (flags, file, ranges, refused settings) is reported in one ConfigError.
 */
export function resolveFromFlags(flags: ParsedFlags, env: ResolveEnv = {}): ResolvedConfig {
  const configFile = (flags.values.configFile as string | undefined) ?? '';
  const ctx = {
    withConfigFile: configFile !== '',
    availableParallelism: env.availableParallelism ?? os.availableParallelism(),
    hostname: env.hostname ?? os.hostname(),
  };
  const config = defaultKubeletConfig(ctx);
  const sources: ConfigSources = {};
  for (const key of Object.keys(config)) if (!NESTED.has(key)) sources[key] = 'default';
  for (const key of ['logging.format', 'logging.verbosity', ...SERVER_NESTED_KEYS]) sources[key] = 'default';

  const problems: LocatedIssue[] = flags.errors.map((message) => ({ path: '', message, where: '' }));
  let displayFile = '';
  if (configFile !== '') {
    displayFile = path.resolve(env.cwd ?? process.cwd(), configFile);
    try {
      const file = loadConfigFile(displayFile, env.readFile ?? ((p) => readFileSync(p, 'utf8')));
      for (const key of applyConfigFile(config, file)) sources[key] = 'file';
    } catch (err) {
      if (!(err instanceof ConfigFileError)) throw err;
      problems.push(...err.issues);
    }
  }

  const target = config as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(flags.values) as [FlagTarget, unknown][]) {
    if (key.startsWith('other.')) config.otherSettings[key.slice('other.'.length)] = value;
    else if (key.includes('.')) setPath(config, key, value);
    else target[key] = value;
    sources[key] = 'flag';
  }
  config.configFile = displayFile;

  if (sources.imageServiceEndpoint === 'default') config.imageServiceEndpoint = config.containerRuntimeEndpoint;
  if (sources.workerThreads === 'default') config.workerThreads = defaultWorkerThreads(ctx.availableParallelism, config.maxPods);
  const override = config.hostnameOverride.trim().toLowerCase();
  if (override !== '') {
    config.nodeName = override;
    sources.nodeName = sources.hostnameOverride!;
  }

  for (const issue of validateKubeletConfig(config)) {
    problems.push({ ...issue, where: describeSource(issue, sources, flags, displayFile) });
  }
  const assessment = assessSettings({
    config,
    defaults: defaultKubeletConfig(ctx),
    sources,
    flagOf: (key) => flags.flagOf.get(key as FlagTarget),
  });
  for (const r of assessment.refused) {
    problems.push({ path: '', message: r.message, where: r.source === 'file' ? `${displayFile}: ${r.name}` : r.name });
  }
  if (problems.length > 0) throw new ConfigError(formatIssues(problems, 'invalid configuration'));
  return { config, sources, explained: assessment.explained.map(({ name, value, message }) => ({ name, value, message })) };
}

/** A config file that cannot be used, with every problem found in it. */
class ConfigFileError extends ConfigError {
  constructor(readonly issues: LocatedIssue[]) {
    super(formatIssues(issues, `invalid KubeletConfiguration in ${issues[0]?.where.split(':')[0] ?? 'the file'}`));
  }
}

/** Reads, parses (YAML or JSON) and schema-checks a KubeletConfiguration file. Throws ConfigError. */
export function loadConfigFile(file: string, readFile: (p: string) => string): KubeletConfigurationFile {
  const fail = (message: string): never => {
    throw new ConfigFileError([{ path: '', message, where: '' }]);
  };
  let text = '';
  try {
    text = readFile(file);
  } catch (err) {
    fail(`cannot read --config file ${file}: ${errorMessage(err)}`);
  }
  // Scalars as the Go kubelet reads them (common/yaml-go.ts): `yes`/`on`/`y` are booleans, `017` octal, `e1` a string.
  const doc = parseDocument(text, { ...GO_YAML_OPTIONS, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) fail(`${file}: invalid YAML: ${doc.errors[0].message}`);
  const raw = goYamlToJson(doc.toJS(GO_YAML_OPTIONS), {
    bigint: false,
    fail: (at, message) => {
      throw new ConfigFileError([{ path: formatFieldPath(at), message, where: `${file}: ${formatFieldPath(at) || '(top level)'}` }]);
    },
  });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail(`${file}: expected a KubeletConfiguration object (apiVersion: kubelet.config.k8s.io/v1beta1, kind: KubeletConfiguration)`);
  }
  const result = KubeletConfigurationFileSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigFileError(
      toConfigIssues(result.error.issues, KubeletConfigurationFileSchema).map((i) => ({
        ...i,
        where: `${file}: ${i.path || '(top level)'}`,
      })),
    );
  }
  return result.data;
}

type LocatedIssue = ConfigIssue & { where: string };

function describeSource(issue: ConfigIssue, sources: ConfigSources, flags: ParsedFlags, file: string): string {
  const top = issue.path.split(/[.[]/)[0] ?? '';
  const key = NESTED.has(top) ? issue.path : top;
  switch (sources[key]) {
    case 'flag':
      return `flag ${flags.flagOf.get(key as FlagTarget) ?? `for ${key}`}`;
    case 'file':
      return `${file}: ${issue.path}`;
    default:
      return issue.path;
  }
}

function formatIssues(issues: LocatedIssue[], heading: string): string {
  const line = (i: LocatedIssue) => (i.where ? `${i.where}: ${i.message}` : i.message);
  if (issues.length === 1) return line(issues[0]);
  return `${heading}: ${issues.length} problems:\n${issues.map((i) => `  - ${line(i)}`).join('\n')}`;
}

// ---------------------------------------------------------------------------
// Validation of the resolved config (ranges and cross-field rules)

const portRange = (min: number) =>
  z
    .int()
    .min(min, { error: `must be between ${min} and 65535` })
    .max(65535, { error: `must be between ${min} and 65535` });
const percent = z.int().min(0, { error: 'must be between 0 and 100' }).max(100, { error: 'must be between 0 and 100' });
const positiveMs = z.number().positive({ error: 'must be greater than 0' });
const nonNegativeMs = z.number().min(0, { error: 'must not be negative' });
const nonNegativeInt = z.int().min(0, { error: 'must not be negative' });
const ipAddress = z.string().refine((v) => isIP(v) !== 0, { error: (iss) => `invalid IP address ${JSON.stringify(iss.input)}` });

/** Range rules for the resolved config (upstream pkg/kubelet/apis/config/validation plus ours). */
export const KubeletConfigConstraints = z
  .looseObject({
    syncFrequency: positiveMs,
    fileCheckFrequency: positiveMs,
    httpCheckFrequency: positiveMs,
    podHousekeepingPeriod: positiveMs,
    runtimeRequestTimeout: positiveMs,
    nodeStatusUpdateFrequency: positiveMs,
    nodeStatusReportFrequency: positiveMs,
    containerLogMonitorInterval: positiveMs,
    imageMinimumGCAge: nonNegativeMs,
    imageMaximumGCAge: nonNegativeMs,
    evictionPressureTransitionPeriod: nonNegativeMs,
    shutdownGracePeriod: nonNegativeMs,
    shutdownGracePeriodCriticalPods: nonNegativeMs,
    address: ipAddress,
    healthzBindAddress: ipAddress,
    port: portRange(1),
    readOnlyPort: portRange(0),
    healthzPort: portRange(0),
    maxPods: z.int().min(1, { error: 'must be greater than 0' }),
    podsPerCore: nonNegativeInt,
    podPidsLimit: z.int().refine((v) => v === -1 || v > 0, { error: 'must be -1 (node limit) or greater than 0' }),
    nodeLeaseDurationSeconds: z.int().min(1, { error: 'must be greater than 0' }),
    nodeStatusMaxImages: z.int().min(-1, { error: 'must be -1 (no cap) or greater' }),
    imageGCHighThresholdPercent: percent,
    imageGCLowThresholdPercent: percent,
    maxParallelImagePulls: z.int().min(1, { error: 'must be greater than 0' }).nullable(),
    registryPullQPS: nonNegativeInt,
    registryBurst: nonNegativeInt,
    kubeAPIQPS: nonNegativeInt,
    kubeAPIBurst: nonNegativeInt,
    eventRecordQPS: nonNegativeInt,
    eventBurst: nonNegativeInt,
    evictionMaxPodGracePeriod: z.int(),
    oomScoreAdj: z.int().min(-1000, { error: 'must be between -1000 and 1000' }).max(1000, { error: 'must be between -1000 and 1000' }),
    containerLogMaxFiles: z.int().min(2, { error: 'must be at least 2' }),
    containerLogMaxWorkers: z.int().min(1, { error: 'must be greater than 0' }),
    containerRuntimeEndpoint: z.string().min(1, { error: 'must not be empty' }),
    clusterDNS: z.array(ipAddress),
    nodeIp: z.string().refine((v) => v === '' || v.split(',').every((ip) => isIP(ip.trim()) !== 0), {
      error: (iss) => `invalid IP address list ${JSON.stringify(iss.input)}`,
    }),
    staticPodURL: z.string().refine((v) => v === '' || URL.canParse(v), { error: (iss) => `invalid URL ${JSON.stringify(iss.input)}` }),
    evictionHard: EvictionThresholdsSchema,
    evictionSoft: EvictionThresholdsSchema,
    evictionMinimumReclaim: EvictionThresholdsSchema,
    systemReserved: ReservedResourcesSchema,
    kubeReserved: ReservedResourcesSchema,
    containerLogMaxSize: QuantitySchema,
    enforceNodeAllocatable: z.array(
      z.enum(ENFORCE_NODE_ALLOCATABLE, {
        error: (iss) => `invalid option ${JSON.stringify(iss.input)} (valid: ${ENFORCE_NODE_ALLOCATABLE.join(', ')})`,
      }),
    ),
    logging: z.looseObject({
      format: z.enum(LOGGING_FORMATS),
      verbosity: z.int().min(0, { error: 'must not be negative' }),
    }),
    workerThreads: z.int().min(0, { error: 'must not be negative (0 = inline mode)' }).max(256, { error: 'must be at most 256' }),
    relistMode: z.enum(RELIST_MODES),
    imageGcPeriod: positiveMs,
    maxContainersPerPod: z.int().min(0, { error: 'must not be negative (0 = no limit)' }),
    pleg: z.enum(PLEG_MODES),
    nodeName: z.string().min(1, { error: 'is empty: set --hostname-override' }),
    tlsCertFile: z.string(),
    tlsPrivateKeyFile: z.string(),
    authentication: z.looseObject({
      webhook: z.looseObject({ cacheTTL: nonNegativeMs }),
    }),
    authorization: z.looseObject({
      mode: z.enum(AUTHORIZATION_MODES),
      webhook: z.looseObject({ cacheAuthorizedTTL: nonNegativeMs, cacheUnauthorizedTTL: nonNegativeMs }),
    }),
  })
  .superRefine((c, ctx) => {
    if ((c.tlsCertFile === '') !== (c.tlsPrivateKeyFile === '')) {
      ctx.addIssue({
        code: 'custom',
        path: [c.tlsCertFile ? 'tlsPrivateKeyFile' : 'tlsCertFile'],
        message: 'tlsCertFile and tlsPrivateKeyFile must be set together',
      });
    }
    if (c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent) {
      ctx.addIssue({
        code: 'custom',
        path: ['imageGCLowThresholdPercent'],
        message: `must be less than imageGCHighThresholdPercent (${c.imageGCHighThresholdPercent})`,
      });
    }
    if (c.serializeImagePulls && c.maxParallelImagePulls !== null && c.maxParallelImagePulls > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxParallelImagePulls'],
        message: 'cannot be larger than 1 unless serializeImagePulls (--serialize-image-pulls) is false',
      });
    }
    if (c.enforceNodeAllocatable.includes('none') && c.enforceNodeAllocatable.length > 1) {
      ctx.addIssue({ code: 'custom', path: ['enforceNodeAllocatable'], message: '"none" cannot be combined with other options' });
    }
    // upstream ParseThresholdConfig: a soft threshold needs its grace period.
    const grace = (c as { evictionSoftGracePeriod?: Record<string, unknown> }).evictionSoftGracePeriod ?? {};
    for (const signal of Object.keys(c.evictionSoft)) {
      if (grace[signal] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['evictionSoft', signal],
          message: `grace period must be specified for the soft eviction threshold ${signal} (set evictionSoftGracePeriod.${signal})`,
        });
      }
    }
  });

/** One problem, with a dotted field path such as `evictionHard.memory.available` or `clusterDNS[0]`. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Formats a zod path as the user wrote it: keys joined by '.', array indexes in brackets. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * Flattens zod issues into ConfigIssues: unknown keys become one "unknown field" issue each, with the
 * closest field names of `schema` at that place when one is close (common/did-you-mean.ts).
 */
export function toConfigIssues(issues: readonly z.core.$ZodIssue[], schema?: z.ZodType): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = schema && objectKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = known ? didYouMean(key, known) : '';
        out.push({ path: formatFieldPath([...issue.path, key]), message: hint ? `unknown field; ${hint}` : 'unknown field' });
      }
    } else if (issue.code === 'invalid_key') {
      out.push({ path: formatFieldPath(issue.path), message: issue.issues[0]?.message ?? issue.message });
    } else {
      out.push({ path: formatFieldPath(issue.path), message: issue.message });
    }
  }
  return out;
}

/** Checks ranges and cross-field rules; returns [] when the config is valid. */
export function validateKubeletConfig(config: KubeletConfig): ConfigIssue[] {
  const result = KubeletConfigConstraints.safeParse(config);
  return result.success ? [] : toConfigIssues(result.error.issues);
}
