/**
 * Fields of a decoded Pod manifest that the v1 Pod does not have (a typo such
 * as `imagee`, or a field at the wrong level), found as `kubectl apply
 * --validate` finds them: against the v1 schema (api/pod-fields.ts), with the
 * path of each (`spec.containers[0].imagee`) and the closest field names at
 * that place. The pod schema (api/pod.ts) keeps unknown fields, so a manifest
 * still decodes; this says what was ignored.
 */
import { didYouMean } from '../common/did-you-mean.js';
import { POD_FIELDS } from './pod-fields.js';

export interface UnknownField {
  /** Where, as `spec.containers[0].imagee`. */
  path: string;
  /** "did you mean image?", or ''. */
  hint: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function walk(value: unknown, type: string, path: string, out: UnknownField[]): void {
  if (type === '') return;
  if (type.startsWith('[]')) {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, type.slice(2), `${path}[${i}]`, out));
    return;
  }
  if (type.startsWith('{}')) {
    if (isObject(value)) for (const [k, v] of Object.entries(value)) walk(v, type.slice(2), `${path}.${k}`, out);
    return;
  }
  const fields = POD_FIELDS[type];
  if (!fields || !isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const fieldType = fields[key];
    if (fieldType === undefined) out.push({ path: at, hint: didYouMean(key, Object.keys(fields)) });
    else walk(v, fieldType, at, out);
  }
}

/** The unknown fields of a Pod document, in document order. */
export function unknownPodFields(doc: unknown): UnknownField[] {
  const out: UnknownField[] = [];
  walk(doc, 'V1Pod', '', out);
  return out;
}

/** "unknown field spec.containers[0].imagee (did you mean image?)". */
export function describeUnknownField(f: UnknownField): string {
  return `unknown field ${f.path}${f.hint ? ` (${f.hint})` : ''}`;
}
