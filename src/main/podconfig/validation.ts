/**
 * Validation of a defaulted pod: the subset of upstream ValidatePodCreate
 * (pkg/apis/core/validation) that the kubelet relies on. Returns field errors
 * formatted as upstream field.Error.Error(), e.g.
 *   spec.containers[1].name: Duplicate value: "web"
 * An empty list means valid. Callers must apply defaults first.
 */
import type { Container, Pod, Probe } from '../../api/pod.js';
import { compareQuantities, isNegative, parseQuantity, type Quantity } from '../../api/quantity.js';
import { validateVolumeMounts, validateVolumes } from './volume-validation.js';

export type FieldErrorType =
  'Required value' | 'Invalid value' | 'Duplicate value' | 'Unsupported value' | 'Forbidden' | 'Too long' | 'Not found';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
}

function quoteValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? 'null';
}

/** Upstream field.Error.Error(). */
export function formatFieldError(e: FieldError): string {
  let s: string;
  if (e.type === 'Required value' || e.type === 'Forbidden' || e.type === 'Too long') s = e.type;
  else s = `${e.type}: ${quoteValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return `${e.field}: ${s}`;
}

/** Upstream utilerrors aggregate formatting of a field error list. */
export function formatFieldErrors(errs: readonly FieldError[]): string {
  const parts = errs.map(formatFieldError);
  return parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function dnsLabel(value: string | undefined, field: string, errs: FieldError[]): void {
  if (!value) return void errs.push({ type: 'Required value', field });
  if (value.length > 63) errs.push({ type: 'Invalid value', field, badValue: value, detail: 'must be no more than 63 characters' });
  if (!DNS1123_LABEL.test(value)) errs.push({ type: 'Invalid value', field, badValue: value, detail: LABEL_MSG });
}

function dnsSubdomain(value: string | undefined, field: string, errs: FieldError[]): void {
  if (!value) return void errs.push({ type: 'Required value', field, detail: 'name or generateName is required' });
  if (value.length > 253) errs.push({ type: 'Invalid value', field, badValue: value, detail: 'must be no more than 253 characters' });
  if (!DNS1123_SUBDOMAIN.test(value)) errs.push({ type: 'Invalid value', field, badValue: value, detail: SUBDOMAIN_MSG });
}

function inRange(v: number | undefined, lo: number, hi: number, field: string, errs: FieldError[]): void {
  if (v === undefined) return;
  if (v < lo || v > hi) errs.push({ type: 'Invalid value', field, badValue: v, detail: `must be between ${lo} and ${hi}, inclusive` });
}

function nonNegative(v: number | null | undefined, field: string, errs: FieldError[]): void {
  if (v != null && v < 0) errs.push({ type: 'Invalid value', field, badValue: v, detail: 'must be greater than or equal to 0' });
}

function validateProbe(p: Probe | undefined, field: string, errs: FieldError[], isLivenessOrStartup: boolean): void {
  if (!p) return;
  const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter((k) => (p as Record<string, unknown>)[k] !== undefined);
  if (handlers.length === 0) errs.push({ type: 'Required value', field, detail: 'must specify a handler type' });
  if (handlers.length > 1)
    errs.push({ type: 'Forbidden', field: `${field}.${handlers[1]}`, detail: 'may not specify more than 1 handler type' });
  nonNegative(p.initialDelaySeconds, `${field}.initialDelaySeconds`, errs);
  for (const k of ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const) {
    const v = p[k];
    if (v !== undefined && v < 1)
      errs.push({ type: 'Invalid value', field: `${field}.${k}`, badValue: v, detail: 'must be greater than or equal to 1' });
  }
  if (isLivenessOrStartup && p.successThreshold !== undefined && p.successThreshold !== 1) {
    errs.push({ type: 'Invalid value', field: `${field}.successThreshold`, badValue: p.successThreshold, detail: 'must be 1' });
  }
  const port = p.httpGet?.port ?? p.tcpSocket?.port;
  const portField = `${field}.${p.httpGet ? 'httpGet' : 'tcpSocket'}.port`;
  if (typeof port === 'number') inRange(port, 1, 65535, portField, errs);
  if (typeof port === 'string' && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(port)) {
    errs.push({
      type: 'Invalid value',
      field: portField,
      badValue: port,
      detail: 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    });
  }
}

function validateResources(c: Container, field: string, errs: FieldError[]): void {
  const parsed: Record<'requests' | 'limits', Map<string, Quantity>> = { requests: new Map(), limits: new Map() };
  for (const kind of ['requests', 'limits'] as const) {
    for (const [name, raw] of Object.entries(c.resources?.[kind] ?? {})) {
      const f = `${field}.resources.${kind}[${name}]`;
      let q: Quantity;
      try {
        q = parseQuantity(raw);
      } catch {
        errs.push({
          type: 'Invalid value',
          field: f,
          badValue: raw,
          detail: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        });
        continue;
      }
      if (isNegative(q)) errs.push({ type: 'Invalid value', field: f, badValue: raw, detail: 'must be greater than or equal to 0' });
      parsed[kind].set(name, q);
    }
  }
  for (const [name, req] of parsed.requests) {
    const lim = parsed.limits.get(name);
    if (lim && compareQuantities(req, lim) > 0) {
      errs.push({
        type: 'Invalid value',
        field: `${field}.resources.requests`,
        badValue: req.raw,
        detail: `must be less than or equal to ${name} limit of ${lim.raw}`,
      });
    }
  }
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];

function unsupported(value: unknown, field: string, allowed: string[], errs: FieldError[]): void {
  errs.push({
    type: 'Unsupported value',
    field,
    badValue: value,
    detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  });
}

function validateContainer(c: Container, field: string, isInit: boolean, volumes: ReadonlySet<string>, errs: FieldError[]): void {
  if (!c.name) errs.push({ type: 'Required value', field: `${field}.name` });
  else if (!DNS1123_LABEL.test(c.name) || c.name.length > 63)
    errs.push({ type: 'Invalid value', field: `${field}.name`, badValue: c.name, detail: LABEL_MSG });
  if (!c.image || c.image.trim() === '') errs.push({ type: 'Required value', field: `${field}.image` });
  if (c.imagePullPolicy && !PULL_POLICIES.includes(c.imagePullPolicy))
    unsupported(c.imagePullPolicy, `${field}.imagePullPolicy`, PULL_POLICIES, errs);
  if (c.terminationMessagePolicy && !TERMINATION_MESSAGE_POLICIES.includes(c.terminationMessagePolicy)) {
    unsupported(c.terminationMessagePolicy, `${field}.terminationMessagePolicy`, TERMINATION_MESSAGE_POLICIES, errs);
  }
  const portNames = new Set<string>();
  (c.ports ?? []).forEach((p, i) => {
    const pf = `${field}.ports[${i}]`;
    if (p.name) {
      if (p.name.length > 15 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p.name) || !/[a-z]/.test(p.name) || p.name.includes('--')) {
        errs.push({
          type: 'Invalid value',
          field: `${pf}.name`,
          badValue: p.name,
          detail: "must be no more than 15 characters, lowercase alphanumeric or '-', contain at least one letter and no adjacent hyphens",
        });
      }
      if (portNames.has(p.name)) errs.push({ type: 'Duplicate value', field: `${pf}.name`, badValue: p.name });
      portNames.add(p.name);
    }
    inRange(p.containerPort, 1, 65535, `${pf}.containerPort`, errs);
    if (p.hostPort) inRange(p.hostPort, 1, 65535, `${pf}.hostPort`, errs);
    if (!p.protocol) errs.push({ type: 'Required value', field: `${pf}.protocol` });
    else if (!PROTOCOLS.includes(p.protocol)) unsupported(p.protocol, `${pf}.protocol`, PROTOCOLS, errs);
  });
  (c.env ?? []).forEach((e, i) => {
    if (!e.name) errs.push({ type: 'Required value', field: `${field}.env[${i}].name` });
    if (e.value && e.valueFrom) {
      errs.push({
        type: 'Invalid value',
        field: `${field}.env[${i}].valueFrom`,
        badValue: '',
        detail: 'may not be specified when `value` is not empty',
      });
    }
  });
  validateResources(c, field, errs);
  validateVolumeMounts(c, field, volumes, errs);
  if (isInit) {
    for (const k of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      if (c[k] && c.restartPolicy !== 'Always')
        errs.push({ type: 'Forbidden', field: `${field}.${k}`, detail: 'may not be set for init containers without restartPolicy=Always' });
    }
  }
  validateProbe(c.livenessProbe, `${field}.livenessProbe`, errs, true);
  validateProbe(c.readinessProbe, `${field}.readinessProbe`, errs, false);
  validateProbe(c.startupProbe, `${field}.startupProbe`, errs, true);
}

/** Validates a defaulted pod; returns [] when valid. */
export function validatePod(pod: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const meta = pod.metadata;
  dnsSubdomain(meta.name, 'metadata.name', errs);
  dnsLabel(meta.namespace, 'metadata.namespace', errs);
  const spec = pod.spec;
  const containers = spec.containers ?? [];
  if (containers.length === 0) errs.push({ type: 'Required value', field: 'spec.containers' });
  const names = new Set<string>();
  const volumes = validateVolumes(pod, errs);
  const check = (list: Container[], path: string, isInit: boolean) =>
    list.forEach((c, i) => {
      const f = `spec.${path}[${i}]`;
      validateContainer(c, f, isInit, volumes, errs);
      if (c.name) {
        if (names.has(c.name)) errs.push({ type: 'Duplicate value', field: `${f}.name`, badValue: c.name });
        names.add(c.name);
      }
    });
  check(spec.initContainers ?? [], 'initContainers', true);
  check(containers, 'containers', false);
  if (!spec.restartPolicy) errs.push({ type: 'Required value', field: 'spec.restartPolicy' });
  else if (!RESTART_POLICIES.includes(spec.restartPolicy)) unsupported(spec.restartPolicy, 'spec.restartPolicy', RESTART_POLICIES, errs);
  if (spec.dnsPolicy && !DNS_POLICIES.includes(spec.dnsPolicy)) unsupported(spec.dnsPolicy, 'spec.dnsPolicy', DNS_POLICIES, errs);
  nonNegative(spec.terminationGracePeriodSeconds, 'spec.terminationGracePeriodSeconds', errs);
  if (spec.activeDeadlineSeconds != null && spec.activeDeadlineSeconds < 1) {
    errs.push({
      type: 'Invalid value',
      field: 'spec.activeDeadlineSeconds',
      badValue: spec.activeDeadlineSeconds,
      detail: 'must be between 1 and 2147483647, inclusive',
    });
  }
  if (spec.hostname) dnsLabel(spec.hostname, 'spec.hostname', errs);
  if (spec.subdomain) dnsLabel(spec.subdomain, 'spec.subdomain', errs);
  return errs;
}
