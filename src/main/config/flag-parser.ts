/**
 * Parses the kubelet-ts command line with commander@14 against every flag
 * spec (flags.ts: kubelet-ts's own and the catalog's upstream flags).
 *
 * Contract:
 * - Only flags the user actually set are reported; defaults are applied by
 *   load-config.ts, so a flag default never overrides a --config file value.
 * - Nothing is thrown for bad input: every unknown flag, bad value, missing
 *   argument and stray positional argument is collected in `errors`, in
 *   command-line order, so that all are reported together.
 * - The program is built fresh per call: commander keeps state between parses.
 */
import { Command, CommanderError, Option } from 'commander';
import { didYouMean } from '../../common/did-you-mean.js';
import { parseDuration } from '../../common/duration.js';
import { parseFeatureGates } from './feature-gates.js';
import { allFlagSpecs, type FlagSpec, type FlagTarget } from './flags.js';
import type { TaintSpec } from './taints.js';
import {
  parseBool,
  parseColonMultimap,
  parseFloatValue,
  parseGracePeriods,
  parseInteger,
  parseKeyValueMap,
  parseLangleMap,
  parseList,
  parseTaints,
} from './parse-values.js';
import { errorMessage } from '../../common/error-message.js';

function valueParser(s: FlagSpec): ((value: string, previous: unknown) => unknown) | undefined {
  const kind = s.kind;
  switch (kind) {
    case 'string':
      return undefined;
    case 'enum':
      return (v) => {
        if (s.choices && !s.choices.includes(v)) throw new Error(`Allowed choices are ${s.choices.join(', ')}.`);
        return v;
      };
    case 'duration':
      return (v) => parseDuration(v);
    case 'int':
      return (v) => parseInteger(v);
    case 'float':
      return (v) => parseFloatValue(v);
    case 'bool':
      return (v) => parseBool(v);
    case 'colonMultimap':
      return (v, prev) => parseColonMultimap(v, prev as Record<string, string[]> | undefined);
    case 'map':
      return (v, prev) => parseKeyValueMap(v, prev as Record<string, string> | undefined);
    case 'langleMap':
      return (v, prev) => parseLangleMap(v, prev as Record<string, string> | undefined);
    case 'list':
      return (v, prev) => parseList(v, prev as string[] | undefined);
    case 'taints':
      return (v, prev) => parseTaints(v, prev as TaintSpec[] | undefined);
    case 'featureGates':
      return (v, prev) => parseFeatureGates(v, prev as Record<string, boolean> | undefined);
    case 'gracePeriods':
      return (v, prev) => parseGracePeriods(v, prev as Record<string, number> | undefined);
    default: {
      const never: never = kind;
      throw new Error(`unhandled flag kind ${String(never)}`);
    }
  }
}

/** --help lists the flags that do something first, then the upstream flags that are accepted or refused. */
const HELP_GROUPS = {
  working: 'Flags:',
  explained: 'Upstream flags accepted with no effect here (the start line says why):',
  refused: 'Upstream flags refused (the error says what to use instead):',
} as const;

const HELP_EXAMPLES = `
Examples:
  # A demo node on the embedded simulated runtime, with its state under ./demo
  kubelet-ts --container-runtime-endpoint=sim --pod-manifest-path=examples/manifests --root-dir=./demo

  # Static pods on containerd (as root: scripts/containerd.sh up starts a private one)
  kubelet-ts --container-runtime-endpoint=unix:///run/kubelet-ts-containerd/containerd.sock --pod-manifest-path=/etc/kubernetes/manifests

  # A node of a cluster (npm run cluster -- up prints a kubeconfig for one)
  kubelet-ts --kubeconfig=/var/lib/kubelet/kubeconfig --container-runtime-endpoint=unix:///run/containerd/containerd.sock

Documentation: docs/configuration.md (every flag and KubeletConfiguration field).
`;

/**
 * Builds a fresh commander program for kubelet-ts. Output goes to the given
 * writers; a bad value is appended to `errors` (the option keeps its earlier value).
 */
export function buildProgram(
  versionText: string,
  out: { writeOut: (s: string) => void; writeErr: (s: string) => void },
  errors: string[] = [],
  bad = new Set<string>(),
): Command {
  const program = new Command('kubelet-ts')
    .description('kubelet-ts: a Kubernetes node agent (kubelet) in TypeScript.')
    .usage('[flags]')
    .optionsGroup(HELP_GROUPS.working)
    .helpOption('-h, --help', 'Show this help and exit.')
    .version(versionText, '--version', 'Print version information and exit.')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: out.writeOut, writeErr: out.writeErr, outputError: () => {} })
    .addHelpText('after', HELP_EXAMPLES);
  const groupOf = (s: FlagSpec) => (s.status === 'refused' ? 'refused' : s.status === 'explained' ? 'explained' : 'working');
  const rank = { working: 0, explained: 1, refused: 2 };
  // Commander lists the groups in the order it meets them.
  const specs = [...allFlagSpecs()].sort((a, b) => rank[groupOf(a)] - rank[groupOf(b)]);
  for (const s of specs) {
    const flags = `${s.short ? `-${s.short}, ` : ''}--${s.name} ${s.kind === 'bool' ? `[${s.arg}]` : `<${s.arg}>`}`;
    const choices = s.choices ? ` One of: ${s.choices.join(', ')}.` : '';
    const opt = new Option(flags, `${s.help}${choices} (default: ${s.defaultText})`);
    opt.helpGroup(HELP_GROUPS[groupOf(s)]);
    if (s.kind === 'bool') opt.preset('true');
    const parse = valueParser(s);
    if (parse) {
      opt.argParser((value: string, previous: unknown) => {
        try {
          return parse(value, previous);
        } catch (err) {
          errors.push(`flag --${s.name}: invalid value ${JSON.stringify(value)}: ${errorMessage(err)}`);
          bad.add(s.name);
          return previous;
        }
      });
    }
    program.addOption(opt);
  }
  return program;
}

/** Flags the user explicitly set, converted to config values. */
export interface ParsedFlags {
  values: Partial<Record<FlagTarget, unknown>>;
  /** target → '--flag-name', for every explicitly set flag. */
  flagOf: Map<FlagTarget, string>;
  /** Every unknown flag, bad value and stray argument, in command-line order. */
  errors: string[];
}

export type FlagParseResult = { kind: 'help'; text: string } | { kind: 'version'; text: string } | { kind: 'flags'; flags: ParsedFlags };

interface Scan {
  /** Known flags, normalised to `--name` / `--name=value`, for commander. */
  known: string[];
  unknown: string[];
  errors: string[];
}

/**
 * Splits argv the way pflag reads it, so that one unknown flag does not hide
 * the rest (commander stops at the first): `--name=value`, `--name value`,
 * `-v 3`, `-v=3`, `-v3`; a bool flag takes `=value` or a following word that
 * is not a flag; `--` ends the flags.
 */
function scanArgv(argv: readonly string[]): Scan {
  const specs = allFlagSpecs();
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const out: Scan = { known: [], unknown: [], errors: [] };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = argv[i + 1];
    const takesNext = next !== undefined && !next.startsWith('-');
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h' || a === '--help' || a === '--version') {
      out.known.push(a === '-h' ? '--help' : a);
      continue;
    }
    let s: FlagSpec | undefined;
    let inline: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      s = byName.get(eq < 0 ? a.slice(2) : a.slice(2, eq));
      inline = eq < 0 ? undefined : a.slice(eq + 1);
    } else if (a.startsWith('-') && a.length > 1) {
      s = byShort.get(a[1]);
      const rest = a.slice(2).replace(/^=/, '');
      inline = rest === '' ? undefined : rest;
    } else {
      positional.push(a);
      continue;
    }
    if (!s) {
      out.unknown.push(a);
      if (!a.includes('=') && takesNext) i++; // its value
      continue;
    }
    if (inline !== undefined) out.known.push(`--${s.name}=${inline}`);
    else if (s.kind === 'bool') {
      if (takesNext) out.known.push(`--${s.name}=${argv[++i]}`);
      else out.known.push(`--${s.name}`);
    } else if (next === undefined) out.errors.push(`flag needs an argument: --${s.name}`);
    else out.known.push(`--${s.name}=${argv[++i]}`);
  }
  if (positional.length > 0) {
    out.errors.push(`unexpected positional arguments ${JSON.stringify(positional)}: kubelet-ts takes only flags`);
  }
  return out;
}

/** An unknown flag, with the closest flag names (common/did-you-mean.ts, as for config and manifest fields). */
function unknownFlagMessage(token: string): string {
  const name = token.split('=')[0];
  const hint = name.startsWith('--')
    ? didYouMean(
        name.slice(2),
        allFlagSpecs().map((s) => s.name),
        (n) => `--${n}`,
      )
    : '';
  return `unknown flag: ${name}${hint ? ` (${hint})` : ''}`;
}

/**
 * Parses argv (without node and script). Returns help/version text instead of
 * printing it; every problem is in `flags.errors`, none is thrown.
 */
export function parseFlags(argv: readonly string[], versionText: string): FlagParseResult {
  const scan = scanArgv(argv);
  const errors = [...scan.unknown.map(unknownFlagMessage), ...scan.errors];
  let stdout = '';
  const bad = new Set<string>();
  const program = buildProgram(versionText, { writeOut: (s) => (stdout += s), writeErr: () => {} }, errors, bad);
  try {
    program.parse(scan.known, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return { kind: 'help', text: stdout };
      if (err.code === 'commander.version') return { kind: 'version', text: stdout };
      errors.push(describeCommanderError(err.message));
    } else throw err;
  }
  const opts = program.opts<Record<string, unknown>>();
  const values: Partial<Record<FlagTarget, unknown>> = {};
  const flagOf = new Map<FlagTarget, string>();
  const byName = new Map(allFlagSpecs().map((s) => [s.name, s]));
  for (const opt of program.options) {
    const key = opt.attributeName();
    const s = byName.get(opt.long?.slice(2) ?? '');
    if (!s || bad.has(s.name) || program.getOptionValueSource(key) !== 'cli') continue;
    let value = opts[key];
    if (s.kind === 'bool' && typeof value === 'string') value = parseBool(value); // the preset
    values[s.target] = value;
    flagOf.set(s.target, `--${s.name}`);
  }
  return { kind: 'flags', flags: { values, flagOf, errors } };
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
