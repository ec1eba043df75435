/**
 * Decoding of static pod manifests (file and http sources): YAML or JSON text
 * → schema check → static-pod defaults → validation. Every failure is a
 * ManifestError whose message names the path/URL, what was wrong and what to
 * do. Mirrors upstream config/common.go tryDecodeSinglePod / tryDecodePodList.
 *
 * Fields the v1 Pod does not have are kept and ignored, as upstream's decoder
 * does; as `kubectl apply --validate` does, each is named with its path
 * (api/unknown-fields.ts): to `onUnknownField` when the pod decodes, and in
 * the error when it does not (a misspelt `image` is the likely cause of
 * "image: Required value").
 */
import { parse as parseYaml } from 'yaml';
import { Counter, type Registry } from 'prom-client';
import type { z } from 'zod';
import { ManifestError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { GO_YAML_OPTIONS, goYamlToJson, type GoYamlPath } from '../../common/yaml-go.js';
import { PodListSchema, PodSchema, type Pod } from '../../api/pod.js';
import { describeUnknownField, unknownPodFields, type UnknownField } from '../../api/unknown-fields.js';
import { applyStaticPodDefaults, type StaticPodDefaultsOptions } from './defaults.js';
import { parseJsonManifest } from './json-manifest.js';
import { formatFieldErrors, validatePod } from './validation.js';

/** Where a manifest came from, how to default it, and who hears of fields a decoded pod ignores. */
export type ManifestContext = StaticPodDefaultsOptions & { onUnknownField?: (field: UnknownField) => void };

/** Upstream maxConfigLength: bodies and files larger than this are rejected. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

const FIX_HINT = 'fix the manifest; the kubelet retries on the next check';

function fail(where: string, reason: string, cause?: unknown): never {
  throw new ManifestError(`${where}: ${reason}; ${FIX_HINT}`, cause === undefined ? undefined : { cause });
}

function describeZod(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join('.') : '<root>'}: ${i.message}`).join('; ');
}

/** A copy of a parsed document with bigint integers as numbers (the form the schema and the rest of the agent use). */
function withNumbers(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(withNumbers);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withNumbers(x)]));
  return v;
}

/**
 * Parses YAML or JSON text into one document as the Go kubelet does
 * (util/yaml.ToJSON: go-yaml v2 scalars, then sigs.k8s.io/yaml's YAMLToJSON;
 * see common/yaml-go.ts): `e1` and `12:30` are strings, `yes`/`on`/`y` are
 * booleans, `0644`/`0o644` octal, `0x1f` hex, `1_000` an integer, and a
 * `.inf`/`.nan` value is an error. Returns the document (integers as
 * numbers) and the same document with exact (bigint) integers, which the
 * static-pod UID hashes. Throws ManifestError.
 */
export function parseManifest(body: string, where: string): { doc: Record<string, unknown>; exact: Record<string, unknown> } {
  // Plain JSON skips the YAML parser when the result is certain to be the same (json-manifest.ts).
  let exact: unknown = parseJsonManifest(body);
  if (exact === undefined) {
    let parsed: unknown;
    try {
      parsed = parseYaml(body, GO_YAML_OPTIONS);
    } catch (err) {
      fail(where, `not valid YAML or JSON: ${errorMessage(err).split('\n')[0]}`, err);
    }
    exact = goYamlToJson(parsed, {
      bigint: true,
      fail: (path: GoYamlPath, reason: string) =>
        fail(where, `cannot convert YAML to JSON: ${path.length ? path.join('.') : '<root>'}: ${reason}`),
    });
  }
  if (exact === null || typeof exact !== 'object' || Array.isArray(exact)) fail(where, 'the document is not an object');
  return { doc: withNumbers(exact) as Record<string, unknown>, exact: exact as Record<string, unknown> };
}

/** parseManifest's document; `exact` keeps integers as bigint. */
export function parseDocument(body: string, where: string, exact = false): Record<string, unknown> {
  const parsed = parseManifest(body, where);
  return exact ? parsed.exact : parsed.doc;
}

function checkTypeMeta(doc: Record<string, unknown>, where: string, kinds: readonly string[]): string {
  const kind = doc['kind'];
  if (typeof kind !== 'string' || kind === '') fail(where, "Object 'Kind' is missing");
  if (!kinds.includes(kind)) fail(where, `kind ${JSON.stringify(kind)} is not one of ${kinds.join(', ')}`);
  if (doc['apiVersion'] !== 'v1') fail(where, `apiVersion ${JSON.stringify(doc['apiVersion'] ?? '')} is not "v1"`);
  return kind;
}

/** "; unknown field a (did you mean b?); unknown field c" for an error message, or ''. */
function unknownFieldsText(unknown: readonly UnknownField[]): string {
  return unknown.map((f) => `; ${describeUnknownField(f)}`).join('');
}

/**
 * `exact` is the same document parsed with exact integers; the UID is computed from it. `prefix` is the
 * item's place in a list (`items[2].`) for the paths given to onUnknownField (an error names the item).
 */
function defaultAndValidate(raw: unknown, ctx: ManifestContext, where: string, exact: Record<string, unknown>, prefix = ''): Pod {
  const unknown = unknownPodFields(raw);
  const r = PodSchema.safeParse(raw);
  if (!r.success) fail(where, `not a valid Pod: ${describeZod(r.error)}${unknownFieldsText(unknown)}`, r.error);
  const pod = applyStaticPodDefaults(r.data, ctx, exact);
  const errs = validatePod(pod);
  if (errs.length > 0) fail(where, `invalid pod: ${formatFieldErrors(errs)}${unknownFieldsText(unknown)}`);
  for (const f of unknown) ctx.onUnknownField?.({ ...f, path: `${prefix}${f.path}` });
  return pod;
}

/** Decodes a manifest holding exactly one Pod (the file source). Throws ManifestError. */
export function decodePodManifest(body: string, ctx: ManifestContext): Pod {
  const where = ctx.manifestSource;
  const { doc, exact } = parseManifest(body, where);
  checkTypeMeta(doc, where, ['Pod']);
  return defaultAndValidate(doc, ctx, where, exact);
}

/**
 * Decodes a Pod, a PodList or a `kind: List` of Pods (the http source).
 * As upstream, one invalid item rejects the whole body. Throws ManifestError.
 */
export function decodePodsManifest(body: string, ctx: ManifestContext): Pod[] {
  const where = ctx.manifestSource;
  const { doc, exact } = parseManifest(body, where);
  const kind = checkTypeMeta(doc, where, ['Pod', 'PodList', 'List']);
  if (kind === 'Pod') return [defaultAndValidate(doc, ctx, where, exact)];
  const exactItems = (exact['items'] as Record<string, unknown>[] | undefined) ?? [];
  const list = PodListSchema.safeParse(doc);
  if (!list.success) fail(where, `not a valid ${kind}: ${describeZod(list.error)}`, list.error);
  return list.data.items.map((item, i) => {
    const itemWhere = `${where} items[${i}]`;
    if (kind === 'List' || item.kind !== undefined) checkTypeMeta(item, itemWhere, ['Pod']);
    return defaultAndValidate(item, ctx, itemWhere, exactItems[i] ?? {}, `items[${i}].`);
  });
}

export const MANIFEST_ERRORS_METRIC = 'kubelet_ts_static_pod_manifest_errors_total';

/**
 * kubelet_ts_static_pod_manifest_errors_total{source}: distinct manifest
 * errors seen by the file/http sources (not an upstream metric). Registered
 * once per registry; every caller with the same registry shares it.
 */
export function manifestErrorsCounter(registry: Registry): Counter<'source'> {
  const existing = registry.getSingleMetric(MANIFEST_ERRORS_METRIC);
  if (existing) return existing as Counter<'source'>;
  return new Counter({
    name: MANIFEST_ERRORS_METRIC,
    help: 'Static pod manifests (file or URL) that failed to parse or validate, counted once per distinct error.',
    labelNames: ['source'],
    registers: [registry],
  });
}
