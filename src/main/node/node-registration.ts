/**
 * The Node object this kubelet registers (upstream initialNode) and the
 * reconciliation of an already registered one (tryRegisterWithAPIServer):
 * - labels kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch (and
 *   the beta.kubernetes.io/os|arch twins), then --node-labels over them;
 * - --register-with-taints as spec.taints;
 * - the controller-managed attach/detach annotation, as upstream's default;
 * - when the Node exists, the default labels this kubelet sets are brought back
 *   to its values (updateDefaultLabels; an empty value removes the label) and
 *   removed hugepage capacities dropped, through one patch.
 */
import type { Node, Taint } from '../../api/cluster.js';
import type { TaintSpec } from '../config/kubelet-config.js';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_ARCH = 'kubernetes.io/arch';
const LABEL_OS_BETA = 'beta.kubernetes.io/os';
const LABEL_ARCH_BETA = 'beta.kubernetes.io/arch';
/** The default labels upstream keeps in sync on an existing Node (updateDefaultLabels). */
const DEFAULT_LABELS = [
  LABEL_HOSTNAME,
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'beta.kubernetes.io/instance-type',
  LABEL_OS,
  LABEL_ARCH,
  LABEL_OS_BETA,
  LABEL_ARCH_BETA,
];
export const ATTACH_DETACH_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';

export interface RegistrationSpec {
  nodeName: string;
  hostname: string;
  operatingSystem: string;
  architecture: string;
  nodeLabels: Record<string, string>;
  taints: TaintSpec[];
  providerID: string;
}

/** The Node to create, without status (the caller applies the status setters). */
export function initialNode(s: RegistrationSpec): Node {
  const labels: Record<string, string> = {
    [LABEL_HOSTNAME]: s.hostname,
    [LABEL_OS]: s.operatingSystem,
    [LABEL_ARCH]: s.architecture,
    [LABEL_OS_BETA]: s.operatingSystem,
    [LABEL_ARCH_BETA]: s.architecture,
    ...s.nodeLabels,
  };
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: s.nodeName, labels, annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' } },
    spec: {},
  };
  if (s.taints.length > 0) node.spec!.taints = s.taints.map((t): Taint => ({ ...t }));
  if (s.providerID) node.spec!.providerID = s.providerID;
  return node;
}

/**
 * What to patch on an existing Node so that it matches this kubelet (upstream's
 * reconcile steps); undefined when nothing needs to change. The patch body is a
 * strategic merge patch for the nodes/<name>/status subresource.
 */
export function reconcileExistingNode(initial: Node, existing: Node): Record<string, unknown> | undefined {
  const labels: Record<string, string | null> = {};
  const want = initial.metadata?.labels ?? {};
  const have = existing.metadata?.labels ?? {};
  // Upstream updateDefaultLabels: only labels this kubelet sets are reconciled (others, e.g. a cloud
  // controller's zone, are left alone); a default label set to "" is removed.
  for (const key of DEFAULT_LABELS) {
    if (want[key] === undefined) continue;
    if (want[key] === '') {
      if (have[key] !== undefined) labels[key] = null;
    } else if (have[key] !== want[key]) {
      labels[key] = want[key];
    }
  }
  const annotations: Record<string, string | null> = {};
  const wantAD = initial.metadata?.annotations?.[ATTACH_DETACH_ANNOTATION];
  if (existing.metadata?.annotations?.[ATTACH_DETACH_ANNOTATION] !== wantAD) annotations[ATTACH_DETACH_ANNOTATION] = wantAD ?? null;
  // Hugepage sizes the host no longer has are dropped from capacity and allocatable (reconcileHugePageResource).
  const status: Record<string, Record<string, null>> = {};
  for (const field of ['capacity', 'allocatable'] as const) {
    for (const key of Object.keys(existing.status?.[field] ?? {})) {
      if (key.startsWith('hugepages-') && initial.status?.[field]?.[key] === undefined) (status[field] ??= {})[key] = null;
    }
  }
  const metadata: Record<string, unknown> = {};
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const patch: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) patch.metadata = metadata;
  if (Object.keys(status).length > 0) patch.status = status;
  return Object.keys(patch).length > 0 ? patch : undefined;
}
