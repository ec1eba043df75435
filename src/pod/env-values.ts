/**
 * Values a container's environment and downwardAPI volumes take from the pod
 * (upstream third_party/forked/golang/expansion, podFieldSelectorRuntimeValue,
 * fieldpath.ExtractFieldPathAsString, ExtractContainerResourceValue,
 * validation.IsEnvVarName). Pure: node facts come in as arguments.
 */
import type { Container, EnvVar, Pod } from '../api/pod.js';
import { milliValue, value } from '../api/quantity.js';
import { KubeletTsError } from '../common/errors.js';

/** The node and pod facts fieldRef paths read. */
export interface FieldRefFacts {
  nodeName: string;
  hostIP?: string;
  hostIPs?: string[];
  /** Primary pod IP ('' when unknown) and all pod IPs. */
  podIP: string;
  podIPs: string[];
}

/**
 * Upstream expansion.Expand: `$(NAME)` becomes lookup(NAME) (an unknown name
 * stays literally `$(NAME)`), `$$` becomes `$`, and any other `$` is kept.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] !== '$' || i + 1 >= input.length) continue;
    out += input.slice(checkpoint, i);
    const next = input[i + 1];
    let advance = 1;
    if (next === '$') out += '$';
    else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) out += '$(';
      else {
        const name = input.slice(i + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - i;
      }
    } else out += `$${next}`;
    i += advance;
    checkpoint = i + 1;
  }
  return out + input.slice(checkpoint);
}

/** An error that names the pod and the container whose environment it is about. */
export function envError(pod: Pod, container: Container, what: string): KubeletTsError {
  return new KubeletTsError(`pod ${pod.metadata.namespace}/${pod.metadata.name} container ${container.name}: ${what}`);
}

/** fieldRef paths as upstream podFieldSelectorRuntimeValue + fieldpath.ExtractFieldPathAsString (env and downwardAPI volumes). */
export function fieldRefValue(pod: Pod, fieldPath: string, opts: FieldRefFacts): string | undefined {
  const m = pod.metadata;
  switch (fieldPath) {
    case 'metadata.name':
      return m.name ?? '';
    case 'metadata.namespace':
      return m.namespace ?? '';
    case 'metadata.uid':
      return m.uid ?? '';
    case 'spec.nodeName':
      return pod.spec.nodeName || opts.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
      return opts.hostIP ?? opts.hostIPs?.[0] ?? '';
    case 'status.hostIPs':
      return (opts.hostIPs ?? (opts.hostIP ? [opts.hostIP] : [])).join(',');
    case 'status.podIP':
      return opts.podIP;
    case 'status.podIPs':
      return opts.podIPs.join(',');
    case 'metadata.labels':
      return formatMap(m.labels ?? {});
    case 'metadata.annotations':
      return formatMap(m.annotations ?? {});
  }
  const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2]] ?? '';
  return undefined;
}

/** Upstream fieldpath.FormatMap: sorted `key="value"` lines. */
function formatMap(map: Record<string, string>): string {
  return Object.keys(map)
    .sort()
    .map((k) => `${k}=${JSON.stringify(map[k])}`)
    .join('\n');
}

/** Upstream ExtractContainerResourceValue for cpu/memory/ephemeral-storage with divisor (rounded up) (env and downwardAPI volumes). */
export function resourceFieldValue(
  pod: Pod,
  container: Container,
  ref: NonNullable<NonNullable<EnvVar['valueFrom']>['resourceFieldRef']>,
  opts: { nodeAllocatable?: { cpu?: string; memory?: string } },
): string {
  const target = ref.containerName
    ? [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].find((c) => c.name === ref.containerName)
    : container;
  if (!target) throw envError(pod, container, `resourceFieldRef names unknown container ${JSON.stringify(ref.containerName)}`);
  const [kind, res] = ref.resource.split('.') as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || !res)
    throw envError(pod, container, `unsupported resourceFieldRef resource ${JSON.stringify(ref.resource)}`);
  let q = target.resources?.[kind]?.[res];
  if (q === undefined && kind === 'limits') q = (opts.nodeAllocatable as Record<string, string> | undefined)?.[res];
  if (q === undefined && kind === 'limits')
    throw envError(pod, container, `resourceFieldRef ${ref.resource}: no limit set and node allocatable ${res} not supplied`);
  // A missing or zero divisor (the apiserver defaults it to "0") means 1, as upstream.
  const divisor = ref.divisor === undefined || value(ref.divisor) === 0n ? '1' : ref.divisor;
  if (res === 'cpu') {
    const d = milliValue(divisor);
    const v = milliValue(q ?? '0');
    return String((v + d - 1n) / d);
  }
  const d = value(divisor);
  const v = value(q ?? '0');
  return String((v + d - 1n) / d);
}

/** Upstream validation.IsEnvVarName: envFrom keys that fail it are skipped. */
export function isEnvVarName(name: string): boolean {
  return /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name);
}
