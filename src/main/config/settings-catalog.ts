/**
 * The one list of every upstream kubelet setting (KubeletConfiguration
 * v1beta1 fields and flags) and what kubelet-ts does with each: honoured,
 * explained (accepted; one startup line when set to a value that upstream
 * would act on) or refused (an error naming the setting and what to use
 * instead). The flag parser, the file schema, the startup lines, the errors
 * and the table in docs/configuration.md (scripts/gen-config-table.ts) all
 * come from it.
 *
 * Settings kubelet-ts does not model (those with a `neutral` value) are
 * parsed by type and kept in `KubeletConfig.otherSettings`, keyed by field
 * path (or flag name for flag-only ones); nothing else reads them.
 */
import * as z from 'zod';
import { durationString } from './duration-schema.js';
import { changedFeatureGates, featureGateProblems } from './feature-gates.js';
import type { SettingStatus, UpstreamSetting, ValueType } from './settings-types.js';
import { UPSTREAM_FIELDS } from './upstream-fields.js';
import { UPSTREAM_FLAGS } from './upstream-flags.js';

export type { SettingStatus, UpstreamSetting } from './settings-types.js';

export const UPSTREAM_SETTINGS: readonly UpstreamSetting[] = [...UPSTREAM_FIELDS, ...UPSTREAM_FLAGS];

/** A setting kubelet-ts does not model: its value lives in otherSettings. */
export function isOther(s: UpstreamSetting): boolean {
  return 'neutral' in s;
}

/** The otherSettings key of an unmodelled setting. */
export function otherKey(s: UpstreamSetting): string {
  return s.field ?? s.flag!;
}

/** The KubeletConfig path of a modelled setting. */
export function configKey(s: UpstreamSetting): string {
  return s.key ?? s.field ?? s.flag!;
}

// ---------------------------------------------------------------------------
// File schema of the unmodelled fields

/** A duration as LoggingConfiguration's TimeOrMetaDuration takes it: a string, or integer nanoseconds. */
const durationOrNs = z.union([durationString, z.int().transform((ns) => ns / 1e6)]);

function zodFor(type: ValueType): z.ZodType {
  switch (type) {
    case 'bool':
      return z.boolean();
    case 'int':
      return z.int();
    case 'float':
      return z.number();
    case 'string':
      return z.string();
    case 'duration':
      return durationOrNs;
    case 'strings':
      return z.array(z.string());
    case 'ints':
      return z.array(z.int());
    case 'map':
    case 'thresholds':
      return z.record(z.string(), z.string());
    case 'gracePeriods':
      return z.record(z.string(), durationString);
    case 'featureGates':
      return z.record(z.string(), z.boolean());
    case 'object':
      return z.record(z.string(), z.unknown()).nullable();
    case 'objects':
      return z.array(z.unknown());
    default: {
      const never: never = type;
      throw new Error(`unhandled value type ${String(never)}`);
    }
  }
}

type Shape = Record<string, z.ZodType>;

/**
 * The zod shape of the unmodelled fields directly under `prefix` ('' for the
 * top level, 'logging' for logging.*), nested groups as strict objects.
 * Top-level groups that kubelet-ts models itself (logging) are skipped.
 */
export function otherFieldsShape(prefix: string, skip: readonly string[] = []): Shape {
  const depth = prefix === '' ? 0 : prefix.split('.').length;
  const shape: Shape = {};
  const groups = new Set<string>();
  for (const s of UPSTREAM_FIELDS) {
    if (!isOther(s) || !s.field) continue;
    const parts = s.field.split('.');
    if (parts.length <= depth || (prefix !== '' && parts.slice(0, depth).join('.') !== prefix)) continue;
    const name = parts[depth];
    if (skip.includes(name)) continue;
    if (parts.length === depth + 1) shape[name] = zodFor(s.type!).optional();
    else groups.add(name);
  }
  for (const g of groups) shape[g] = z.strictObject(otherFieldsShape(prefix === '' ? g : `${prefix}.${g}`)).optional();
  return shape;
}

/** Top-level file keys that hold only unmodelled fields (copied to otherSettings, not to the config). */
export function otherTopLevelKeys(): Set<string> {
  return new Set(Object.keys(otherFieldsShape('', ['logging'])));
}

/** Copies the unmodelled fields set in a parsed file into `into`, keyed by dotted path. */
export function collectOtherFields(file: Record<string, unknown>, into: Record<string, unknown>): string[] {
  const set: string[] = [];
  for (const s of UPSTREAM_FIELDS) {
    if (!isOther(s) || !s.field) continue;
    let v: unknown = file;
    for (const p of s.field.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
    if (v === undefined) continue;
    into[s.field] = v;
    set.push(s.field);
  }
  return set;
}

// ---------------------------------------------------------------------------
// Assessment of a resolved configuration

function getPath(o: unknown, path: string): unknown {
  let v = o;
  for (const p of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isZero(v: unknown): boolean {
  if (v === null || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

export interface SettingFinding {
  setting: UpstreamSetting;
  /** The setting as the user set it: 'flag --x' or the field path. */
  name: string;
  value: unknown;
  source: 'file' | 'flag';
}

export interface Assessment {
  /** Refused settings set to a value kubelet-ts cannot honour, and feature gate errors. */
  refused: (SettingFinding & { message: string })[];
  /** Explained settings set to a value upstream would act on: one startup line each. */
  explained: (SettingFinding & { message: string })[];
}

export interface AssessInput {
  config: { otherSettings: Record<string, unknown>; featureGates: Record<string, boolean> };
  defaults: object;
  /** Sources by config key ('file' | 'flag' | 'default'), unmodelled settings under 'other.<key>'. */
  sources: Record<string, string>;
  flagOf: (target: string) => string | undefined;
}

/** Finds every refused or explained setting the user set to a value that matters. */
export function assessSettings(input: AssessInput): Assessment {
  const out: Assessment = { refused: [], explained: [] };
  for (const s of UPSTREAM_SETTINGS) {
    if (s.status === 'honoured') continue;
    const other = isOther(s);
    const key = other ? otherKey(s) : configKey(s);
    const sourceKey = other ? `other.${key}` : key;
    const source = input.sources[sourceKey] ?? input.sources[key.split('.')[0]];
    if (source !== 'file' && source !== 'flag') continue;
    const value = other ? input.config.otherSettings[key] : getPath(input.config, key);
    const neutral = other
      ? value === undefined ||
        same(value, s.neutral) ||
        (s.neutrals ?? []).some((n) => same(n, value)) ||
        (typeof value !== 'boolean' && isZero(value))
      : s.field === 'featureGates'
        ? changedFeatureGates(input.config.featureGates).length === 0
        : same(value, getPath(input.defaults, key));
    if (neutral) continue;
    const name = source === 'flag' ? `flag ${input.flagOf(sourceKey) ?? `--${s.flag}`}` : (s.field ?? key);
    const finding: SettingFinding = { setting: s, name, value, source };
    if (s.status === 'refused') out.refused.push({ ...finding, message: `not supported by kubelet-ts: ${s.note}` });
    else if (s.field === 'featureGates') {
      out.explained.push({ ...finding, value: changedFeatureGates(input.config.featureGates).join(','), message: s.note });
    } else out.explained.push({ ...finding, message: s.note });
  }
  for (const problem of featureGateProblems(input.config.featureGates)) {
    const source = input.sources.featureGates === 'flag' ? 'flag' : 'file';
    const s = UPSTREAM_FIELDS.find((f) => f.field === 'featureGates')!;
    const name = source === 'flag' ? 'flag --feature-gates' : 'featureGates';
    out.refused.push({ setting: s, name, value: input.config.featureGates, source, message: problem });
  }
  return out;
}

/** Counts per status, for the docs and tests. */
export function statusCounts(settings: readonly UpstreamSetting[]): Record<SettingStatus, number> {
  const c: Record<SettingStatus, number> = { honoured: 0, explained: 0, refused: 0 };
  for (const s of settings) c[s.status]++;
  return c;
}
