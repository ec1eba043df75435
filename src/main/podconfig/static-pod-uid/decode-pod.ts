/**
 * A v1 Pod manifest (the JSON value of the YAML/JSON document) decoded the
 * way the v1.20 kubelet's file source decodes it into the internal core.Pod:
 * case-sensitive JSON into the v1 types, the v1 defaults of
 * SetObjectDefaults_Pod, then conversion to the internal types (host
 * namespace flags into the pod security context, serviceAccount as an alias,
 * podIP into podIPs, init-container annotations dropped, TypeMeta cleared).
 *
 * The result is the value model go-spew.ts prints. Unknown JSON fields are
 * ignored, as upstream. Throws UnreproducibleError for input whose in-memory
 * form depends on the machine (a non-null timestamp holds time.Local) and
 * DecodeError for input upstream would refuse to decode.
 */
import { parseFamiliarName } from '@swimlane/docker-reference';
import type { GoTypes } from './go-spew.js';
import { parseGoQuantity, roundUpGoQuantity, type GoQuantity } from './go-quantity.js';
import { errorMessage } from '../../../common/error-message.js';

export class DecodeError extends Error {}
export class UnreproducibleError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The parsed quantity behind each Quantity value (for RoundUp and DeepCopy). */
const quantities = new WeakMap<object, GoQuantity>();

/** The Go value of a Quantity struct (resource.Quantity's fields), written into `target`. */
function quantityValue(q: GoQuantity, target: Obj = {}): Obj {
  let Dec: Obj | undefined;
  if (q.d) {
    const abs = q.d.unscaled < 0n ? -q.d.unscaled : q.d.unscaled;
    const words: bigint[] = [];
    for (let x = abs; x > 0n; x >>= 64n) words.push(x & ((1n << 64n) - 1n));
    Dec = { unscaled: { neg: q.d.unscaled < 0n, abs: words.length ? words : undefined }, scale: q.d.scale };
  }
  Object.assign(target, { i: { value: q.i.value, scale: q.i.scale }, d: { Dec }, s: q.s, Format: q.format });
  quantities.set(target, q);
  return target;
}

export class PodDecoder {
  constructor(private readonly types: GoTypes) {}

  /** JSON → Go value of `typeName` (v1 JSON names, internal field names). */
  decode(typeName: string, json: unknown): unknown {
    if (typeName === 'resource.Quantity') {
      if (json === undefined || json === null) return undefined;
      const raw = typeof json === 'number' || typeof json === 'bigint' ? String(json) : json;
      if (typeof raw !== 'string') throw new DecodeError(`quantity: cannot decode ${JSON.stringify(json)}`);
      try {
        return quantityValue(parseGoQuantity(raw.trim()));
      } catch (err) {
        throw new DecodeError(`quantity ${JSON.stringify(raw)}: ${errorMessage(err)}`);
      }
    }
    if (typeName === 'intstr.IntOrString') {
      if (json === undefined || json === null) return undefined;
      if (typeof json === 'string') return { Type: 1, StrVal: json };
      if ((typeof json === 'number' && Number.isInteger(json)) || typeof json === 'bigint') return { Type: 0, IntVal: json };
      throw new DecodeError(`IntOrString: cannot decode ${JSON.stringify(json)}`);
    }
    if (typeName === 'v1.Time') {
      if (json === undefined || json === null || json === '') return undefined;
      throw new UnreproducibleError('a timestamp in the manifest is held in the local time zone, which the hash includes');
    }
    const t = this.types[typeName];
    if (!t) throw new Error(`unknown Go type ${typeName}`);
    if (json === undefined || json === null) return undefined;
    switch (t.k) {
      case 'ptr':
        return this.decode(t.e, json) ?? (this.types[t.e]?.k === 'struct' ? {} : undefined);
      case 'slice':
      case 'array':
        if (!Array.isArray(json)) throw new DecodeError(`expected an array for ${typeName}`);
        return json.map((x) => this.decode(t.e, x));
      case 'map':
        if (!isObj(json)) throw new DecodeError(`expected an object for ${typeName}`);
        return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, this.decode(t.e, v)]));
      case 'struct': {
        if (!isObj(json)) throw new DecodeError(`expected an object for ${typeName}`);
        const out: Obj = {};
        for (const [name, ftype, jname, embedded] of t.f) {
          if (jname === null || (jname === '' && !embedded) || jname === '-') continue;
          const v = embedded && jname === '' ? this.decode(ftype, json) : this.decode(ftype, json[jname]);
          if (v !== undefined) out[name] = v;
        }
        return out;
      }
      case 'string':
        if (typeof json !== 'string') throw new DecodeError(`expected a string for ${typeName}`);
        return json;
      case 'bool':
        if (typeof json !== 'boolean') throw new DecodeError(`expected a boolean for ${typeName}`);
        return json;
      default:
        if (typeof json === 'bigint') return json;
        if (typeof json !== 'number' || !Number.isInteger(json)) throw new DecodeError(`expected an integer for ${typeName}`);
        return json;
    }
  }
}

// --- v1 defaults (pkg/apis/core/v1 defaults.go, SetObjectDefaults_Pod, v1.20) ---

/** Upstream parsers.ParseImageName's tag: the tag, "latest" when there is neither tag nor digest, "" on a parse error. */
export function imageTag(image: string): string {
  try {
    const ref = parseFamiliarName(image);
    if (ref.tag) return ref.tag;
    return ref.digest ? '' : 'latest';
  } catch {
    return '';
  }
}

function roundUpList(list: unknown): void {
  if (!isObj(list)) return;
  for (const q of Object.values(list)) {
    const quantity = quantities.get(q as Obj)!;
    roundUpGoQuantity(quantity, -3);
    quantityValue(quantity, q as Obj);
  }
}

function defaultHTTPGet(h: unknown): void {
  if (!isObj(h)) return;
  h['Path'] ||= '/';
  h['Scheme'] ||= 'HTTP';
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  p['TimeoutSeconds'] ||= 1;
  p['PeriodSeconds'] ||= 10;
  p['SuccessThreshold'] ||= 1;
  p['FailureThreshold'] ||= 3;
  defaultHTTPGet((p['Handler'] as Obj | undefined)?.['HTTPGet']);
}

function defaultContainer(c: Obj): void {
  const image = typeof c['Image'] === 'string' ? c['Image'] : '';
  if (!c['ImagePullPolicy']) c['ImagePullPolicy'] = imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
  c['TerminationMessagePath'] ||= '/dev/termination-log';
  c['TerminationMessagePolicy'] ||= 'File';
  for (const p of (c['Ports'] as Obj[] | undefined) ?? []) p['Protocol'] ||= 'TCP';
  for (const e of (c['Env'] as Obj[] | undefined) ?? []) {
    const ref = (e['ValueFrom'] as Obj | undefined)?.['FieldRef'] as Obj | undefined;
    if (ref) ref['APIVersion'] ||= 'v1';
  }
  const res = (c['Resources'] ??= {}) as Obj;
  roundUpList(res['Limits']);
  roundUpList(res['Requests']);
  defaultProbe(c['LivenessProbe']);
  defaultProbe(c['ReadinessProbe']);
  defaultProbe(c['StartupProbe']);
  const lc = c['Lifecycle'] as Obj | undefined;
  defaultHTTPGet((lc?.['PostStart'] as Obj | undefined)?.['HTTPGet']);
  defaultHTTPGet((lc?.['PreStop'] as Obj | undefined)?.['HTTPGet']);
}

/** Requests default to limits (SetDefaults_Pod), before any rounding; each copy is its own quantity. */
function requestsFromLimits(c: Obj): void {
  const res = c['Resources'] as Obj | undefined;
  const limits = res?.['Limits'] as Obj | undefined;
  if (!res || !limits) return;
  const requests = (res['Requests'] ??= {}) as Obj;
  for (const [k, q] of Object.entries(limits)) {
    if (k in requests) continue;
    requests[k] = quantityValue({ ...quantities.get(q as Obj)! });
  }
}

const allPtrsNil = (src: Obj) => Object.values(src).every((v) => v === undefined);

function defaultVolume(v: Obj): void {
  const src = (v['VolumeSource'] ??= {}) as Obj;
  if (allPtrsNil(src)) src['EmptyDir'] = {};
  const hostPath = src['HostPath'] as Obj | undefined;
  if (hostPath && hostPath['Type'] === undefined) hostPath['Type'] = '';
  for (const k of ['Secret', 'ConfigMap', 'DownwardAPI', 'Projected']) {
    const s = src[k] as Obj | undefined;
    if (s && s['DefaultMode'] === undefined) s['DefaultMode'] = 420;
  }
  const iscsi = src['ISCSI'] as Obj | undefined;
  if (iscsi) iscsi['ISCSIInterface'] ||= 'default';
  const rbd = src['RBD'] as Obj | undefined;
  if (rbd) {
    rbd['RBDPool'] ||= 'rbd';
    rbd['RadosUser'] ||= 'admin';
    rbd['Keyring'] ||= '/etc/ceph/keyring';
  }
  for (const item of ((src['DownwardAPI'] as Obj | undefined)?.['Items'] as Obj[] | undefined) ?? []) {
    const ref = item['FieldRef'] as Obj | undefined;
    if (ref) ref['APIVersion'] ||= 'v1';
  }
  const azure = src['AzureDisk'] as Obj | undefined;
  if (azure) {
    azure['CachingMode'] ??= 'ReadWrite';
    azure['Kind'] ??= 'Shared';
    azure['FSType'] ??= 'ext4';
    azure['ReadOnly'] ??= false;
  }
  for (const p of ((src['Projected'] as Obj | undefined)?.['Sources'] as Obj[] | undefined) ?? []) {
    for (const item of ((p['DownwardAPI'] as Obj | undefined)?.['Items'] as Obj[] | undefined) ?? []) {
      const ref = item['FieldRef'] as Obj | undefined;
      if (ref) ref['APIVersion'] ||= 'v1';
    }
    const token = p['ServiceAccountToken'] as Obj | undefined;
    if (token && token['ExpirationSeconds'] === undefined) token['ExpirationSeconds'] = 3600;
  }
  const scaleio = src['ScaleIO'] as Obj | undefined;
  if (scaleio) {
    scaleio['StorageMode'] ||= 'ThinProvisioned';
    scaleio['FSType'] ||= 'xfs';
  }
  const claim = (src['Ephemeral'] as Obj | undefined)?.['VolumeClaimTemplate'] as Obj | undefined;
  if (claim) {
    const spec = (claim['Spec'] ??= {}) as Obj;
    spec['VolumeMode'] ??= 'Filesystem';
    const res = (spec['Resources'] ??= {}) as Obj;
    roundUpList(res['Limits']);
    roundUpList(res['Requests']);
  }
}

/**
 * SetObjectDefaults_Pod on the decoded value, then the v1 → internal
 * conversion. `raw` is the manifest's JSON (for the v1-only PodSpec and
 * PodStatus fields the internal types do not have).
 */
export function defaultAndConvert(pod: Obj, raw: Obj): Obj {
  const spec = (pod['Spec'] ??= {}) as Obj;
  const rawSpec = isObj(raw['spec']) ? raw['spec'] : {};
  const hostNetwork = rawSpec['hostNetwork'] === true;
  const containers = (spec['Containers'] as Obj[] | undefined) ?? [];
  const inits = (spec['InitContainers'] as Obj[] | undefined) ?? [];
  const ephemeral = ((spec['EphemeralContainers'] as Obj[] | undefined) ?? []).map((e) => (e['EphemeralContainerCommon'] ??= {}) as Obj);

  // SetDefaults_Pod
  for (const c of [...containers, ...inits]) requestsFromLimits(c);
  spec['EnableServiceLinks'] ??= true;
  // SetDefaults_PodSpec
  spec['DNSPolicy'] ||= 'ClusterFirst';
  spec['RestartPolicy'] ||= 'Always';
  if (hostNetwork) {
    for (const c of [...containers, ...inits]) {
      for (const p of (c['Ports'] as Obj[] | undefined) ?? []) if (!p['HostPort']) p['HostPort'] = p['ContainerPort'] ?? 0;
    }
  }
  spec['SecurityContext'] ??= {};
  spec['TerminationGracePeriodSeconds'] ??= 30;
  spec['SchedulerName'] ||= 'default-scheduler';
  for (const v of (spec['Volumes'] as Obj[] | undefined) ?? []) defaultVolume(v);
  for (const c of [...inits, ...containers, ...ephemeral]) defaultContainer(c);
  roundUpList(spec['Overhead']);

  // Convert_v1_PodSpec_To_core_PodSpec
  if (!spec['ServiceAccountName'] && typeof rawSpec['serviceAccount'] === 'string' && rawSpec['serviceAccount']) {
    spec['ServiceAccountName'] = rawSpec['serviceAccount'];
  }
  const sc = spec['SecurityContext'] as Obj;
  for (const [json, field] of [
    ['hostNetwork', 'HostNetwork'],
    ['hostPID', 'HostPID'],
    ['hostIPC', 'HostIPC'],
  ] as const) {
    if (rawSpec[json] !== undefined && rawSpec[json] !== null && typeof rawSpec[json] !== 'boolean')
      throw new DecodeError(`spec.${json}: expected a boolean`);
    sc[field] = rawSpec[json] === true;
  }
  const share = rawSpec['shareProcessNamespace'];
  if (share !== undefined && share !== null && typeof share !== 'boolean')
    throw new DecodeError('spec.shareProcessNamespace: expected a boolean');
  sc['ShareProcessNamespace'] = typeof share === 'boolean' ? share : undefined;

  // Convert_v1_PodStatus_To_core_PodStatus
  const rawStatus = isObj(raw['status']) ? raw['status'] : {};
  const podIP = typeof rawStatus['podIP'] === 'string' ? rawStatus['podIP'] : '';
  if (podIP) {
    const status = (pod['Status'] ??= {}) as Obj;
    const ips = status['PodIPs'] as Obj[] | undefined;
    if (!ips || ips.length === 0 || ips[0]['IP'] !== podIP) status['PodIPs'] = [{ IP: podIP }];
  }

  // Convert_v1_Pod_To_core_Pod: drop the legacy init-container annotations.
  const meta = (pod['ObjectMeta'] ??= {}) as Obj;
  const annotations = meta['Annotations'] as Obj | undefined;
  const legacy = [
    'pod.beta.kubernetes.io/init-containers',
    'pod.alpha.kubernetes.io/init-containers',
    'pod.beta.kubernetes.io/init-container-statuses',
    'pod.alpha.kubernetes.io/init-container-statuses',
  ];
  if (annotations && legacy.some((k) => k in annotations)) {
    meta['Annotations'] = Object.fromEntries(Object.entries(annotations).filter(([k]) => !legacy.includes(k)));
  }
  // An internal object has no TypeMeta.
  delete pod['TypeMeta'];
  return pod;
}
