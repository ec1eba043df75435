/**
 * The pod's required node affinity against this node (upstream
 * component-helpers nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)):
 * every spec.nodeSelector pair must equal a node label, and, when
 * affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution is
 * set, at least one of its nodeSelectorTerms must match. A term matches when
 * all its matchExpressions (node labels) and matchFields (only
 * `metadata.name`) do; a term with neither matches nothing, and a term with a
 * malformed requirement (e.g. Gt on a non-integer) does not match. Pure.
 */
import type { Pod } from '../../api/pod.js';

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface MatchNode {
  name: string;
  labels: Record<string, string>;
}

function requirementMatches(r: NodeSelectorRequirement, values: Record<string, string>): boolean | undefined {
  const has = Object.prototype.hasOwnProperty.call(values, r.key);
  const v = values[r.key];
  const list = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return list.length > 0 ? has && list.includes(v) : undefined;
    case 'NotIn':
      return list.length > 0 ? !has || !list.includes(v) : undefined;
    case 'Exists':
      return list.length === 0 ? has : undefined;
    case 'DoesNotExist':
      return list.length === 0 ? !has : undefined;
    case 'Gt':
    case 'Lt': {
      if (list.length !== 1 || !/^-?\d+$/.test(list[0])) return undefined;
      if (!has || !/^-?\d+$/.test(v)) return false;
      const [a, b] = [BigInt(v), BigInt(list[0])];
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return undefined;
  }
}

function termMatches(t: NodeSelectorTerm, node: MatchNode): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const r of exprs) if (requirementMatches(r, node.labels) !== true) return false;
  for (const r of fields) {
    if (r.key !== 'metadata.name' || (r.operator !== 'In' && r.operator !== 'NotIn') || (r.values ?? []).length !== 1) return false;
    if (requirementMatches(r, { 'metadata.name': node.name }) !== true) return false;
  }
  return true;
}

/** Whether the node satisfies the pod's nodeSelector and required node affinity. */
export function matchesRequiredNodeAffinity(pod: Pod, node: MatchNode): boolean {
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const affinity = pod.spec['affinity'] as
    { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } | null } } | undefined;
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
}
