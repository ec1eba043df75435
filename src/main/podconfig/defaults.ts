/**
 * Defaulting for pods read from the file and http sources.
 *
 *  - applyV1Defaults: the core/v1 field defaults (pkg/apis/core/v1/defaults.go)
 *    that the kubelet relies on. Upstream applies these while decoding.
 *  - applyStaticPodDefaults: upstream config/common.go applyDefaults on top.
 *
 * Both mutate the pod passed in and return it; callers pass a freshly parsed
 * object. Neither validates (see validation.ts).
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../common/clock.js';
import type { Container, HTTPGetAction, Pod, Probe } from '../../api/pod.js';
import { isUnreproducible, upstreamStaticPodUID } from './static-pod-uid/static-pod-uid.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_SEEN_ANNOTATION, CONFIG_SOURCE_ANNOTATION, type SourceName } from './types.js';

export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

function defaultHTTPGet(h: HTTPGetAction | undefined): void {
  if (!h) return;
  if (!h.path) h.path = '/';
  if (!h.scheme) h.scheme = 'HTTP';
}

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  if (!p.periodSeconds) p.periodSeconds = 10;
  if (!p.successThreshold) p.successThreshold = 1;
  if (!p.failureThreshold) p.failureThreshold = 3;
  defaultHTTPGet(p.httpGet);
}

/**
 * Upstream SetDefaults_Container: `Always` when the tag is `latest` or there is
 * neither tag nor digest, else `IfNotPresent` (a digest-only reference has no tag).
 */
export function defaultImagePullPolicy(image: string | undefined): 'Always' | 'IfNotPresent' {
  const ref = image ?? '';
  if (ref.includes('@')) return 'IfNotPresent';
  const lastSegment = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  const tag = colon >= 0 ? lastSegment.slice(colon + 1) : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container, hostNetwork: boolean): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = defaultImagePullPolicy(c.image);
  if (!c.terminationMessagePath) c.terminationMessagePath = DEFAULT_TERMINATION_MESSAGE_PATH;
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const port of c.ports ?? []) {
    if (!port.protocol) port.protocol = 'TCP';
    if (hostNetwork && !port.hostPort) port.hostPort = port.containerPort;
  }
  for (const env of c.env ?? []) {
    const ref = env.valueFrom?.fieldRef;
    if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultHTTPGet(c.lifecycle?.postStart?.httpGet);
  defaultHTTPGet(c.lifecycle?.preStop?.httpGet);
  // SetDefaults_Pod: a limit with no matching request defaults the request.
  const limits = c.resources?.limits;
  if (limits && c.resources) {
    const requests = (c.resources.requests ??= {});
    for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
  }
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
/** The core/v1 defaultMode of configMap, secret, downwardAPI and projected volumes (0644). */
const DEFAULT_VOLUME_MODE = 0o644;

function defaultFieldRefs(items: unknown): void {
  for (const item of Array.isArray(items) ? items : []) {
    const ref = asObj(asObj(item)?.['fieldRef']);
    if (ref && !ref['apiVersion']) ref['apiVersion'] = 'v1';
  }
}

/**
 * SetDefaults_{HostPath,ConfigMap,Secret,DownwardAPI,Projected}VolumeSource and
 * SetDefaults_ServiceAccountTokenProjection (expirationSeconds 3600).
 */
function defaultVolumeSource(v: Obj): void {
  const hostPath = asObj(v['hostPath']);
  if (hostPath && hostPath['type'] === undefined) hostPath['type'] = '';
  for (const kind of ['configMap', 'secret', 'downwardAPI', 'projected']) {
    const src = asObj(v[kind]);
    if (src && src['defaultMode'] === undefined) src['defaultMode'] = DEFAULT_VOLUME_MODE;
  }
  defaultFieldRefs(asObj(v['downwardAPI'])?.['items']);
  const sources = asObj(v['projected'])?.['sources'];
  for (const s of Array.isArray(sources) ? sources : []) {
    defaultFieldRefs(asObj(asObj(s)?.['downwardAPI'])?.['items']);
    const token = asObj(asObj(s)?.['serviceAccountToken']);
    if (token && token['expirationSeconds'] === undefined) token['expirationSeconds'] = 3600;
  }
}

/** Applies the core/v1 defaults a kubelet relies on. Mutates and returns `pod`. */
export function applyV1Defaults(pod: Pod): Pod {
  const spec = pod.spec;
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (spec.terminationGracePeriodSeconds == null) spec.terminationGracePeriodSeconds = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.schedulerName) spec.schedulerName = DEFAULT_SCHEDULER_NAME;
  if (!spec.securityContext) spec.securityContext = {};
  if (spec.enableServiceLinks === undefined) spec.enableServiceLinks = true;
  const hostNetwork = spec.hostNetwork === true;
  for (const c of spec.initContainers ?? []) defaultContainer(c, hostNetwork);
  for (const c of spec.containers ?? []) defaultContainer(c, hostNetwork);
  for (const v of spec.volumes ?? []) {
    // SetDefaults_Volume: a volume with no source is an emptyDir.
    if (Object.keys(v).every((k) => k === 'name')) v.emptyDir = {};
    defaultVolumeSource(v);
  }
  return pod;
}

/** JSON with object keys sorted and undefined values dropped; stable across key order. */
export function canonicalJSON(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJSON(x))).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJSON(x)}`).join(',')}}`;
}

/**
 * The fallback UID of a static pod whose upstream UID cannot be reproduced
 * (see staticPodUID): 32 hex chars of md5(`host:<node>` `file:<path>`
 * <canonical JSON of the v1-defaulted pod>) for a file, md5(`url:<url>`
 * <canonical JSON>) for a URL. Stable (same node, source and content → same
 * UID) but different from the Go kubelet's.
 */
export function fallbackStaticPodHash(pod: Pod, manifestSource: string, isFile: boolean, nodeName: string): string {
  const h = createHash('md5');
  if (isFile) h.update(`host:${nodeName}`).update(`file:${manifestSource}`);
  else h.update(`url:${manifestSource}`);
  h.update(canonicalJSON(pod));
  return h.digest('hex');
}

/**
 * The UID of a static pod that has none: the v1.20.2 Go kubelet's
 * (static-pod-uid/), computed from `manifest`, the document as parsed (YAML
 * 1.1, integers as bigint), before any defaulting. Manifests whose upstream
 * UID depends on the machine (a non-null timestamp) or that the Go kubelet
 * could not decode get fallbackStaticPodHash instead.
 */
export function staticPodUID(
  manifest: Record<string, unknown>,
  defaulted: () => Pod,
  options: StaticPodDefaultsOptions,
): { uid: string; upstream: boolean } {
  try {
    return { uid: upstreamStaticPodUID(manifest), upstream: true };
  } catch (err) {
    if (!isUnreproducible(err)) throw err;
    return { uid: fallbackStaticPodHash(defaulted(), options.manifestSource, options.isFile, options.nodeName), upstream: false };
  }
}

/** Go's time.RFC3339Nano in UTC: fractional seconds with trailing zeros trimmed. */
export function formatRFC3339Nano(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.?0+Z$/, 'Z')
    .replace(/\.Z$/, 'Z');
}

/** Upstream generatePodName: static pod names are unique per node. */
export function staticPodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

export interface StaticPodDefaultsOptions {
  /** Manifest path (file source) or URL (http source). */
  manifestSource: string;
  isFile: boolean;
  /** The PodSource name recorded in kubernetes.io/config.source. */
  sourceName: SourceName;
  nodeName: string;
  clock: Clock;
}

/**
 * Upstream common.go applyDefaults, after the v1 defaults:
 * UID (when absent) = staticPodUID of `manifest` (default: the pod as given); name += `-<node>`; namespace `default`
 * when empty; spec.nodeName = node; annotations config.hash = UID,
 * config.source, config.seen (now, RFC3339Nano); file pods tolerate every
 * NoExecute taint; status.phase = Pending. config.mirror is never set here.
 */
export function applyStaticPodDefaults(pod: Pod, opts: StaticPodDefaultsOptions, manifest?: Record<string, unknown>): Pod {
  const source = manifest ?? structuredClone(pod);
  applyV1Defaults(pod);
  const meta = pod.metadata;
  if (!meta.uid) meta.uid = staticPodUID(source, () => pod, opts).uid;
  meta.name = staticPodName(meta.name ?? '', opts.nodeName);
  if (!meta.namespace) meta.namespace = DEFAULT_NAMESPACE;
  pod.spec.nodeName = opts.nodeName;
  meta.annotations = {
    ...meta.annotations,
    [CONFIG_HASH_ANNOTATION]: meta.uid,
    [CONFIG_SOURCE_ANNOTATION]: opts.sourceName,
    [CONFIG_SEEN_ANNOTATION]: formatRFC3339Nano(opts.clock.now()),
  };
  if (opts.isFile) {
    const tolerations = (pod.spec.tolerations ??= []);
    const has = tolerations.some((t) => !t.key && t.operator === 'Exists' && t.effect === 'NoExecute' && !t.value);
    if (!has) tolerations.push({ operator: 'Exists', effect: 'NoExecute' });
  }
  pod.status = { ...pod.status, phase: 'Pending' };
  return pod;
}
