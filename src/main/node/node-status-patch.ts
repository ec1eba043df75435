/**
 * The strategic merge patch that turns one node status into another (upstream
 * PatchNodeStatus sends a two-way strategic merge patch of the status). Rules
 * of core/v1 NodeStatus: `conditions` merge by `type` (conditions other
 * components own are left alone), `addresses` are replaced as a whole (the
 * kubelet owns them, and dual-stack has two of one type), `images` are atomic,
 * maps merge key by key with `null` deleting a key.
 */
import type { NodeStatus } from '../../api/cluster.js';
import { twoWayMergePatch } from '../apiserver/strategic-patch.js';

const NODE_STATUS_SCHEMA = { mergeKeys: { 'status.conditions': 'type' }, replaceLists: ['status.addresses'] };

/** The patch body `{status: …}`, or undefined when nothing differs. */
export function nodeStatusPatch(before: NodeStatus | undefined, after: NodeStatus): Record<string, unknown> | undefined {
  return twoWayMergePatch({ status: before ?? {} }, { status: after }, NODE_STATUS_SCHEMA);
}
