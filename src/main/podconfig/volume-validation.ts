/**
 * The volume part of upstream ValidatePodCreate (pkg/apis/core/validation
 * ValidateVolumes, validateVolumeMounts), for pods that reach the kubelet
 * without an apiserver (static pods): field errors in upstream's words.
 * Sources kubelet-ts has no plugin for are checked only for having exactly one
 * source; the volume manager reports them when a container mounts them.
 */
import type { Container, Pod } from '../../api/pod.js';
import { HOST_PATH_TYPES } from '../volumes/host-path-plugin.js';
import type { FieldError } from './validation.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const PROPAGATION_MODES = ['Bidirectional', 'HostToContainer', 'None'];
const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];
const MAX_TOKEN_EXPIRATION = 2 ** 32;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function noBacksteps(path: string, field: string, errs: FieldError[]): void {
  if (path.split('/').includes('..')) errs.push({ type: 'Invalid value', field, badValue: path, detail: "must not contain '..'" });
}

/** Upstream validateLocalDescendingPath. */
function localDescendingPath(path: string, field: string, errs: FieldError[]): void {
  if (path.startsWith('/')) errs.push({ type: 'Invalid value', field, badValue: path, detail: 'must be a relative path' });
  noBacksteps(path, field, errs);
}

/** Upstream validateKeyToPath-style item path: required, relative, no `..`, not starting with `..`. */
function itemPath(path: unknown, field: string, errs: FieldError[]): void {
  const p = str(path);
  if (!p) return void errs.push({ type: 'Required value', field });
  localDescendingPath(p, field, errs);
  if (p.split('/')[0].startsWith('..')) errs.push({ type: 'Invalid value', field, badValue: p, detail: "must not start with '..'" });
}

function fileMode(mode: unknown, field: string, errs: FieldError[]): void {
  if (mode === undefined || mode === null) return;
  if (typeof mode !== 'number' || !Number.isInteger(mode) || mode < 0 || mode > 0o777) {
    errs.push({ type: 'Invalid value', field, badValue: mode, detail: 'must be a number between 0 and 0777 (octal), both inclusive' });
  }
}

/** Runs `check` on each element of an item list (each as an object), reporting a list that is not one. */
function eachItem(items: unknown, field: string, errs: FieldError[], check: (item: Obj, f: string) => void): void {
  if (items === undefined) return;
  if (!Array.isArray(items)) return void errs.push({ type: 'Invalid value', field, badValue: items, detail: 'must be a list' });
  items.forEach((it: unknown, i) => {
    const f = `${field}[${i}]`;
    const item = isObj(it) ? it : {};
    itemPath(item['path'], `${f}.path`, errs);
    fileMode(item['mode'], `${f}.mode`, errs);
    check(item, f);
  });
}

function keyToPaths(items: unknown, field: string, errs: FieldError[]): void {
  eachItem(items, field, errs, (item, f) => {
    if (!str(item['key'])) errs.push({ type: 'Required value', field: `${f}.key` });
  });
}

function downwardItems(items: unknown, field: string, errs: FieldError[]): void {
  eachItem(items, field, errs, (item, f) => {
    const fieldRef = isObj(item['fieldRef']) ? item['fieldRef'] : undefined;
    const resourceRef = isObj(item['resourceFieldRef']) ? item['resourceFieldRef'] : undefined;
    if (fieldRef && resourceRef) {
      errs.push({
        type: 'Invalid value',
        field: f,
        badValue: 'resource',
        detail: 'fieldRef and resourceFieldRef can not be specified simultaneously',
      });
    } else if (fieldRef) {
      const fp = str(fieldRef['fieldPath']) ?? '';
      if (!VOLUME_FIELD_PATHS.includes(fp) && !/^metadata\.(labels|annotations)\['.+'\]$/.test(fp)) {
        errs.push({
          type: 'Unsupported value',
          field: `${f}.fieldRef.fieldPath`,
          badValue: fp,
          detail: `supported values: ${VOLUME_FIELD_PATHS.map((x) => JSON.stringify(x)).join(', ')}`,
        });
      }
    } else if (resourceRef) {
      if (!str(resourceRef['containerName'])) errs.push({ type: 'Required value', field: `${f}.resourceFieldRef.containerName` });
    } else {
      errs.push({ type: 'Required value', field: f, detail: 'one of fieldRef and resourceFieldRef is required' });
    }
  });
}

function validateSource(kind: string, src: Obj, field: string, errs: FieldError[]): void {
  switch (kind) {
    case 'hostPath': {
      const path = str(src['path']);
      if (!path) errs.push({ type: 'Required value', field: `${field}.path` });
      else noBacksteps(path, `${field}.path`, errs);
      const type = src['type'] ?? '';
      if (typeof type !== 'string' || !HOST_PATH_TYPES.includes(type)) {
        errs.push({
          type: 'Unsupported value',
          field: `${field}.type`,
          badValue: type,
          detail: `supported values: ${HOST_PATH_TYPES.map((x) => JSON.stringify(x)).join(', ')}`,
        });
      }
      return;
    }
    case 'configMap':
      if (!str(src['name'])) errs.push({ type: 'Required value', field: `${field}.name` });
      fileMode(src['defaultMode'], `${field}.defaultMode`, errs);
      return keyToPaths(src['items'], `${field}.items`, errs);
    case 'secret':
      if (!str(src['secretName'])) errs.push({ type: 'Required value', field: `${field}.secretName` });
      fileMode(src['defaultMode'], `${field}.defaultMode`, errs);
      return keyToPaths(src['items'], `${field}.items`, errs);
    case 'downwardAPI':
      fileMode(src['defaultMode'], `${field}.defaultMode`, errs);
      return downwardItems(src['items'], `${field}.items`, errs);
    case 'projected':
      return validateProjected(src, field, errs);
  }
}

function validateProjected(src: Obj, field: string, errs: FieldError[]): void {
  fileMode(src['defaultMode'], `${field}.defaultMode`, errs);
  const sources = Array.isArray(src['sources']) ? (src['sources'] as unknown[]) : [];
  sources.forEach((s: unknown, i) => {
    const f = `${field}.sources[${i}]`;
    const o = isObj(s) ? s : {};
    const kinds = Object.keys(o).filter((k) => o[k] !== undefined && o[k] !== null);
    if (kinds.length === 0) return void errs.push({ type: 'Required value', field: f, detail: 'must specify exactly 1 volume type' });
    if (kinds.length > 1)
      return void errs.push({ type: 'Forbidden', field: `${f}.${kinds[1]}`, detail: 'may not specify more than 1 volume type' });
    const kind = kinds[0];
    const inner = isObj(o[kind]) ? o[kind] : {};
    if (kind === 'configMap' || kind === 'secret') {
      if (!str(inner['name'])) errs.push({ type: 'Required value', field: `${f}.${kind}.name` });
      keyToPaths(inner['items'], `${f}.${kind}.items`, errs);
    } else if (kind === 'downwardAPI') {
      downwardItems(inner['items'], `${f}.downwardAPI.items`, errs);
    } else if (kind === 'serviceAccountToken') {
      itemPath(inner['path'], `${f}.serviceAccountToken.path`, errs);
      const exp = inner['expirationSeconds'];
      if (typeof exp === 'number' && exp < 600) {
        errs.push({
          type: 'Invalid value',
          field: `${f}.serviceAccountToken.expirationSeconds`,
          badValue: exp,
          detail: 'may not specify a duration less than 10 minutes',
        });
      }
      if (typeof exp === 'number' && exp > MAX_TOKEN_EXPIRATION) {
        errs.push({
          type: 'Invalid value',
          field: `${f}.serviceAccountToken.expirationSeconds`,
          badValue: exp,
          detail: 'may not specify a duration larger than 2^32 seconds',
        });
      }
    }
  });
}

/** spec.volumes: names (DNS labels, unique), exactly one source each, and the fields of the sources kubelet-ts supports. */
export function validateVolumes(pod: Pod, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  (pod.spec.volumes ?? []).forEach((vol, i) => {
    const field = `spec.volumes[${i}]`;
    if (!vol.name) errs.push({ type: 'Required value', field: `${field}.name` });
    else if (!DNS1123_LABEL.test(vol.name) || vol.name.length > 63) {
      errs.push({ type: 'Invalid value', field: `${field}.name`, badValue: vol.name, detail: LABEL_MSG });
    } else if (names.has(vol.name)) errs.push({ type: 'Duplicate value', field: `${field}.name`, badValue: vol.name });
    if (vol.name) names.add(vol.name);
    const v = vol as Obj;
    const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] !== undefined && v[k] !== null);
    if (sources.length === 0) return void errs.push({ type: 'Required value', field, detail: 'must specify a volume type' });
    if (sources.length > 1)
      return void errs.push({ type: 'Forbidden', field: `${field}.${sources[1]}`, detail: 'may not specify more than 1 volume type' });
    const kind = sources[0];
    validateSource(kind, isObj(v[kind]) ? v[kind] : {}, `${field}.${kind}`, errs);
  });
  return names;
}

/** A container's volumeMounts (upstream ValidateVolumeMounts). */
export function validateVolumeMounts(c: Container, field: string, volumes: ReadonlySet<string>, errs: FieldError[]): void {
  const paths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const f = `${field}.volumeMounts[${i}]`;
    if (!m.name) errs.push({ type: 'Required value', field: `${f}.name` });
    else if (!volumes.has(m.name)) errs.push({ type: 'Not found', field: `${f}.name`, badValue: m.name });
    if (!m.mountPath) errs.push({ type: 'Required value', field: `${f}.mountPath` });
    else if (paths.has(m.mountPath))
      errs.push({ type: 'Invalid value', field: `${f}.mountPath`, badValue: m.mountPath, detail: 'must be unique' });
    if (m.mountPath) paths.add(m.mountPath);
    if (m.subPath) localDescendingPath(m.subPath, `${f}.subPath`, errs);
    const expr = str(m['subPathExpr']);
    if (expr && m.subPath) {
      errs.push({
        type: 'Invalid value',
        field: `${f}.subPathExpr`,
        badValue: expr,
        detail: 'subPathExpr and subPath are mutually exclusive',
      });
    }
    if (expr) localDescendingPath(expr, `${f}.subPathExpr`, errs);
    const mode = m.mountPropagation;
    if (mode !== undefined && !PROPAGATION_MODES.includes(mode)) {
      errs.push({
        type: 'Unsupported value',
        field: `${f}.mountPropagation`,
        badValue: mode,
        detail: `supported values: ${PROPAGATION_MODES.map((x) => JSON.stringify(x)).join(', ')}`,
      });
    } else if (mode === 'Bidirectional' && c.securityContext?.privileged !== true) {
      errs.push({
        type: 'Forbidden',
        field: `${f}.mountPropagation`,
        detail: 'Bidirectional mount propagation is available only to privileged containers',
      });
    }
  });
}
