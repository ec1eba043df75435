/**
 * Node capacity and allocatable (upstream nodestatus.MachineInfo and
 * cm.GetNodeAllocatableReservation): capacity from the host (cpu, memory,
 * pods, ephemeral-storage, hugepages-*); allocatable is capacity minus
 * kubeReserved, systemReserved and the hard eviction threshold (memory.available
 * for memory, nodefs.available for ephemeral-storage), minus pre-allocated huge
 * pages for memory, never below zero. Values are canonical Quantity strings.
 */
import { formatBytes, formatDecimalInteger, formatMilli, milliValue, parseQuantity, value } from '../../api/quantity.js';
import type { MachineFacts } from '../host/host-probe.js';
import { thresholdAmount } from './pressure.js';

export type ResourceStrings = Record<string, string>;

export interface CapacityInputs {
  machine: MachineFacts;
  /** Bytes of the filesystem holding --root-dir; undefined when unknown. */
  rootfsCapacityBytes: bigint | undefined;
  maxPods: number;
  podsPerCore: number;
}

export function nodeCapacity(i: CapacityInputs): ResourceStrings {
  const pods = i.podsPerCore > 0 ? Math.min(i.maxPods, i.podsPerCore * i.machine.cpuCores) : i.maxPods;
  const out: ResourceStrings = {
    cpu: formatMilli(BigInt(i.machine.cpuCores) * 1000n),
    memory: formatBytes(i.machine.memoryBytes),
    pods: formatDecimalInteger(BigInt(pods)),
  };
  if (i.rootfsCapacityBytes !== undefined) out['ephemeral-storage'] = formatBytes(i.rootfsCapacityBytes);
  for (const [size, bytes] of Object.entries(i.machine.hugepages)) out[`hugepages-${size}`] = formatBytes(bytes);
  return out;
}

const isMilli = (resource: string) => resource === 'cpu';
const amount = (resource: string, q: string) => (isMilli(resource) ? milliValue(parseQuantity(q)) : value(parseQuantity(q)));
const format = (resource: string, v: bigint) =>
  isMilli(resource) ? formatMilli(v) : resource === 'pods' ? formatDecimalInteger(v) : formatBytes(v);

export interface Reservations {
  systemReserved: ResourceStrings;
  kubeReserved: ResourceStrings;
  evictionHard: ResourceStrings;
}

export function nodeAllocatable(capacity: ResourceStrings, r: Reservations): ResourceStrings {
  const out: ResourceStrings = {};
  for (const [resource, cap] of Object.entries(capacity)) {
    const capAmount = amount(resource, cap);
    let reserved = 0n;
    for (const list of [r.systemReserved, r.kubeReserved]) if (list[resource]) reserved += amount(resource, list[resource]);
    const signal = resource === 'memory' ? 'memory.available' : resource === 'ephemeral-storage' ? 'nodefs.available' : undefined;
    const threshold = signal ? r.evictionHard[signal] : undefined;
    if (threshold) reserved += thresholdAmount(threshold, capAmount);
    const left = capAmount - reserved;
    out[resource] = format(resource, left < 0n ? 0n : left);
  }
  // Huge pages are pre-allocated: they come out of allocatable memory.
  if (out.memory !== undefined) {
    let mem = amount('memory', out.memory);
    for (const [resource, cap] of Object.entries(capacity)) if (resource.startsWith('hugepages-')) mem -= amount(resource, cap);
    out.memory = format('memory', mem < 0n ? 0n : mem);
  }
  return out;
}
