/**
 * The node status setters, in upstream's order (pkg/kubelet/nodestatus,
 * defaultNodeStatusFuncs): addresses, machine info (capacity, allocatable,
 * identity), version info, daemon endpoints, images, OS/arch, then the
 * MemoryPressure, DiskPressure, PIDPressure and Ready conditions, and the
 * schedulable event. Pure but for `memory`: they mutate the given Node from
 * plain inputs and report node events through `record`, as upstream's
 * recordEventFunc (e.g. NodeHasSufficientMemory on the first report and on
 * every transition, NodeReady / NodeNotReady, Rebooted when the node's boot id
 * is not the one it last reported, NodeSchedulable / NodeNotSchedulable when
 * spec.unschedulable changes).
 *
 * Capacity and allocatable are merged into what the node has, as upstream's
 * MachineInfo: keys the kubelet does not compute (an extended resource an
 * operator patched onto the status, `example.com/dongle: 4`) are kept in
 * capacity and carried into allocatable; an extended resource gone from
 * capacity leaves allocatable too.
 */
import { isDeepStrictEqual } from 'node:util';
import type { NodeImage } from '../images/image-list-cache.js';
import type { Node, NodeCondition } from '../../api/cluster.js';
import { parseQuantity } from '../../api/quantity.js';
import { isExtendedResourceName } from '../../api/resource-names.js';
import type { MachineFacts } from '../host/host-probe.js';
import type { NodeAddress } from './node-address.js';
import type { PressureCondition } from './pressure.js';

/** A quantity's value in nano-units, exact for every quantity the node status carries (for comparing by value). */
function exactValue(q: string): string {
  try {
    const v = parseQuantity(q);
    return String((v.num * 1_000_000_000n) / v.den);
  } catch {
    return q;
  }
}

/** Upstream MaxNamesPerImageInNodeStatus. */
export const MAX_NAMES_PER_IMAGE = 5;

export interface NodeStatusInputs {
  /** RFC3339 time of this update (heartbeat and transition times). */
  now: string;
  addresses: NodeAddress[];
  machine: MachineFacts;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  /** "containerd://1.6.20" */
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeletPort: number;
  /** Sorted by size, largest first, already capped at nodeStatusMaxImages; undefined when listing failed. */
  images: NodeImage[] | undefined;
  underPressure: (c: PressureCondition) => boolean;
  /** Runtime, network and other errors that make the node NotReady (empty: Ready). */
  readyErrors: string[];
  /** Unique names of attachable volumes in use (upstream VolumesInUse); undefined: not known yet, left as it is. */
  volumesInUse?: string[];
}

/** Records a node event; without `message`, upstream's "Node <name> status is now: <reason>". */
export type RecordNodeEvent = (type: 'Normal' | 'Warning', reason: string, message?: string) => void;

/** What the setters keep between updates (upstream Kubelet fields): the last spec.unschedulable they saw. */
export interface NodeStatusMemory {
  lastUnschedulable: boolean;
}

interface PressureText {
  type: PressureCondition;
  trueReason: string;
  trueMessage: string;
  trueEvent: string;
  falseReason: string;
  falseMessage: string;
  falseEvent: string;
}

const PRESSURE: PressureText[] = [
  {
    type: 'MemoryPressure',
    trueReason: 'KubeletHasInsufficientMemory',
    trueMessage: 'kubelet has insufficient memory available',
    trueEvent: 'NodeHasInsufficientMemory',
    falseReason: 'KubeletHasSufficientMemory',
    falseMessage: 'kubelet has sufficient memory available',
    falseEvent: 'NodeHasSufficientMemory',
  },
  {
    type: 'DiskPressure',
    trueReason: 'KubeletHasDiskPressure',
    trueMessage: 'kubelet has disk pressure',
    trueEvent: 'NodeHasDiskPressure',
    falseReason: 'KubeletHasNoDiskPressure',
    falseMessage: 'kubelet has no disk pressure',
    falseEvent: 'NodeHasNoDiskPressure',
  },
  {
    type: 'PIDPressure',
    trueReason: 'KubeletHasInsufficientPID',
    trueMessage: 'kubelet has insufficient PID available',
    trueEvent: 'NodeHasInsufficientPID',
    falseReason: 'KubeletHasSufficientPID',
    falseMessage: 'kubelet has sufficient PID available',
    falseEvent: 'NodeHasSufficientPID',
  },
];

/** Upstream errors.NewAggregate(...).Error(): distinct messages; one as is, several as "[a, b]". */
export function aggregateMessage(errors: readonly string[]): string {
  const distinct = [...new Set(errors)];
  return distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
}

function conditions(node: Node): NodeCondition[] {
  node.status ??= {};
  return (node.status.conditions ??= []);
}

function setPressureCondition(node: Node, t: PressureText, i: NodeStatusInputs, record: RecordNodeEvent): void {
  const list = conditions(node);
  let c = list.find((x) => x.type === t.type);
  const isNew = c === undefined;
  c ??= { type: t.type, status: 'Unknown' };
  c.lastHeartbeatTime = i.now;
  if (i.underPressure(t.type)) {
    if (c.status !== 'True') {
      Object.assign(c, { status: 'True', reason: t.trueReason, message: t.trueMessage, lastTransitionTime: i.now });
      record('Normal', t.trueEvent);
    }
  } else if (c.status !== 'False') {
    Object.assign(c, { status: 'False', reason: t.falseReason, message: t.falseMessage, lastTransitionTime: i.now });
    record('Normal', t.falseEvent);
  }
  if (isNew) list.push(c);
}

const REQUIRED_CAPACITY = ['cpu', 'memory', 'pods', 'ephemeral-storage'];

function setReadyCondition(node: Node, i: NodeStatusInputs, record: RecordNodeEvent): void {
  const errs = [...i.readyErrors];
  const missing = REQUIRED_CAPACITY.filter((r) => node.status?.capacity?.[r] === undefined);
  if (missing.length > 0) errs.push(`missing node capacity for resources: ${missing.join(', ')}`);
  const next: NodeCondition =
    errs.length === 0
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: i.now }
      : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: aggregateMessage(errs), lastHeartbeatTime: i.now };
  const list = conditions(node);
  const at = list.findIndex((x) => x.type === 'Ready');
  if (at < 0) {
    list.push({ ...next, lastTransitionTime: i.now });
    return;
  }
  const prev = list[at];
  if (prev.status === next.status) {
    next.lastTransitionTime = prev.lastTransitionTime;
  } else {
    next.lastTransitionTime = i.now;
    record('Normal', next.status === 'True' ? 'NodeReady' : 'NodeNotReady');
  }
  list[at] = next;
}

/**
 * Upstream MachineInfo's resources: the kubelet's own capacity over the node's, and allocatable as the
 * kubelet computes it for its own keys, as capacity for the others (no reservation applies to them).
 */
function setResources(status: NonNullable<Node['status']>, i: NodeStatusInputs): void {
  const capacity: Record<string, string> = { ...status.capacity, ...i.capacity };
  const allocatable: Record<string, string> = { ...status.allocatable };
  for (const k of Object.keys(allocatable)) if (!(k in capacity) && isExtendedResourceName(k)) delete allocatable[k];
  for (const [k, v] of Object.entries(capacity)) allocatable[k] = i.allocatable[k] ?? v;
  status.capacity = capacity;
  status.allocatable = allocatable;
}

/** Upstream recordNodeSchedulableEvent: an event each time spec.unschedulable differs from the last one seen. */
function recordSchedulable(node: Node, memory: NodeStatusMemory, record: RecordNodeEvent): void {
  const unschedulable = node.spec?.unschedulable === true;
  if (unschedulable === memory.lastUnschedulable) return;
  record('Normal', unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable');
  memory.lastUnschedulable = unschedulable;
}

/** Applies every setter to `node` in upstream order. */
export function setNodeStatus(node: Node, i: NodeStatusInputs, record: RecordNodeEvent, memory: NodeStatusMemory): void {
  const status = (node.status ??= {});
  status.addresses = i.addresses.map((a) => ({ ...a }));
  setResources(status, i);
  const lastBoot = status.nodeInfo?.bootID;
  if (lastBoot && lastBoot !== i.machine.bootID) {
    record('Warning', 'Rebooted', `Node ${node.metadata?.name ?? ''} has been rebooted, boot id: ${i.machine.bootID}`);
  }
  status.nodeInfo = {
    machineID: i.machine.machineID,
    systemUUID: i.machine.systemUUID,
    bootID: i.machine.bootID,
    kernelVersion: i.machine.kernelVersion,
    osImage: i.machine.osImage,
    containerRuntimeVersion: i.containerRuntimeVersion,
    kubeletVersion: i.kubeletVersion,
    kubeProxyVersion: i.kubeletVersion,
    operatingSystem: i.machine.operatingSystem,
    architecture: i.machine.architecture,
  };
  status.daemonEndpoints = { kubeletEndpoint: { Port: i.kubeletPort } }; // "Port": the wire name is capitalised
  // Go's nil slice: no images means no `images` field (the apiserver returns none either).
  const images = (i.images ?? []).map((img) => ({
    names: [...img.repoDigests, ...img.repoTags].slice(0, MAX_NAMES_PER_IMAGE),
    sizeBytes: img.sizeBytes,
  }));
  if (images.length > 0) status.images = images;
  else delete status.images;
  for (const t of PRESSURE) setPressureCondition(node, t, i, record);
  setReadyCondition(node, i, record);
  if (i.volumesInUse) {
    if (i.volumesInUse.length > 0) status.volumesInUse = [...i.volumesInUse];
    else delete status.volumesInUse;
  }
  recordSchedulable(node, memory, record);
}

/**
 * Upstream nodeStatusHasChanged: any difference but the conditions' heartbeat
 * times; conditions compare as a set keyed by type, objects regardless of key
 * order, quantities by value ("8Gi" = "8589934592"), an empty list as no list.
 */
export function nodeStatusChanged(before: Node['status'], after: Node['status']): boolean {
  const quantities = (m: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(m ?? {}).map(([k, q]) => [k, exactValue(q)]));
  const normalize = (s: Node['status']): unknown => {
    const plain = JSON.parse(JSON.stringify(s ?? {}), (_k, v: unknown) =>
      Array.isArray(v) && v.length === 0 ? undefined : v,
    ) as NonNullable<Node['status']>;
    const conds = (plain.conditions ?? []).map(({ lastHeartbeatTime: _heartbeat, ...rest }) => rest);
    conds.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
    return { ...plain, conditions: conds, capacity: quantities(plain.capacity), allocatable: quantities(plain.allocatable) };
  };
  return !isDeepStrictEqual(normalize(before), normalize(after));
}
