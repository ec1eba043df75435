import { describe, expect, it } from 'vitest';
import type { MachineFacts } from '../../src/main/host/host-probe.js';
import { nodeAllocatable, nodeCapacity, type CapacityInputs, type Reservations } from '../../src/main/node/node-resources-calc.js';

const GI = 1024n ** 3n;

const machine = (over: Partial<MachineFacts> = {}): MachineFacts => ({
  machineID: 'm',
  systemUUID: 'u',
  bootID: 'b',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  operatingSystem: 'linux',
  architecture: 'amd64',
  cpuCores: 4,
  memoryBytes: 8n * GI,
  hugepages: {},
  ...over,
});

const capInputs = (over: Partial<CapacityInputs> = {}): CapacityInputs => ({
  machine: machine(),
  rootfsCapacityBytes: 100n * GI,
  maxPods: 110,
  podsPerCore: 0,
  ...over,
});

const BASE_CAPACITY = { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' };

// Upstream MachineInfo: cpu = NumCores*1000 milli (DecimalSI), memory and
// ephemeral-storage and hugepages bytes (BinarySI), pods = maxPods or
// min(cores*podsPerCore, maxPods) (DecimalSI), all printed by Quantity.String().
describe('nodeCapacity', () => {
  it.each([
    { name: 'a 4-core 8 GiB host, 100 GiB root fs', inputs: capInputs(), expected: BASE_CAPACITY },
    { name: 'podsPerCore below maxPods', inputs: capInputs({ podsPerCore: 10 }), expected: { ...BASE_CAPACITY, pods: '40' } },
    { name: 'podsPerCore above maxPods', inputs: capInputs({ podsPerCore: 100 }), expected: BASE_CAPACITY },
    // NewQuantity(1000, DecimalSI).String() is "1k"; the apiserver stores it so.
    { name: 'maxPods 1000 (DecimalSI)', inputs: capInputs({ maxPods: 1000 }), expected: { ...BASE_CAPACITY, pods: '1k' } },
    { name: 'maxPods 2500', inputs: capInputs({ maxPods: 2500 }), expected: { ...BASE_CAPACITY, pods: '2500' } },
    {
      name: 'memory not a multiple of 1 Mi',
      inputs: capInputs({ machine: machine({ memoryBytes: 25274150912n }) }),
      expected: { ...BASE_CAPACITY, memory: '24681788Ki' },
    },
    {
      name: 'root fs size unknown',
      inputs: capInputs({ rootfsCapacityBytes: undefined }),
      expected: { cpu: '4', memory: '8Gi', pods: '110' },
    },
    {
      name: 'pre-allocated huge pages, one size empty',
      inputs: capInputs({ machine: machine({ hugepages: { '2Mi': GI, '1Gi': 0n } }) }),
      expected: { ...BASE_CAPACITY, 'hugepages-2Mi': '1Gi', 'hugepages-1Gi': '0' },
    },
    { name: 'one core', inputs: capInputs({ machine: machine({ cpuCores: 1 }) }), expected: { ...BASE_CAPACITY, cpu: '1' } },
  ])('$name', ({ inputs, expected }) => {
    expect(nodeCapacity(inputs)).toEqual(expected);
  });
});

const none: Reservations = { systemReserved: {}, kubeReserved: {}, evictionHard: {} };

// Upstream: allocatable[r] = capacity[r] - (systemReserved[r] + kubeReserved[r] +
// hardEvictionReservation[r]) floored at 0, then each hugepages-* capacity is
// taken out of memory (floored at 0). hardEvictionReservation covers only
// memory.available → memory and nodefs.available → ephemeral-storage; a
// percentage is int64(float64(capacity) * float64(float32(pct)/100)).
describe('nodeAllocatable', () => {
  it.each([
    { name: 'no reservations: allocatable = capacity', capacity: BASE_CAPACITY, r: none, expected: BASE_CAPACITY },
    {
      name: 'system- and kube-reserved cpu',
      capacity: BASE_CAPACITY,
      r: { ...none, systemReserved: { cpu: '500m' }, kubeReserved: { cpu: '100m' } },
      expected: { ...BASE_CAPACITY, cpu: '3400m' },
    },
    {
      name: 'reserved cpu adding up to whole cores',
      capacity: BASE_CAPACITY,
      r: { ...none, systemReserved: { cpu: '1500m' }, kubeReserved: { cpu: '0.5' } },
      expected: { ...BASE_CAPACITY, cpu: '2' },
    },
    {
      name: 'memory: system + kube reserved + hard eviction quantity',
      capacity: BASE_CAPACITY,
      r: { systemReserved: { memory: '500Mi' }, kubeReserved: { memory: '256Mi' }, evictionHard: { 'memory.available': '100Mi' } },
      expected: { ...BASE_CAPACITY, memory: '7336Mi' },
    },
    {
      name: 'memory: a decimal reservation leaves a plain byte count',
      capacity: BASE_CAPACITY,
      r: { ...none, systemReserved: { memory: '1G' } },
      expected: { ...BASE_CAPACITY, memory: '7589934592' },
    },
    {
      name: 'memory: hard eviction as a percentage (float32 percentage, as upstream)',
      capacity: BASE_CAPACITY,
      r: { ...none, evictionHard: { 'memory.available': '10%' } },
      // 8589934592 - int64(8589934592 * float32(0.1)) = 8589934592 - 858993472
      expected: { ...BASE_CAPACITY, memory: '7730941120' },
    },
    {
      name: 'memory: hard eviction 50%',
      capacity: BASE_CAPACITY,
      r: { ...none, evictionHard: { 'memory.available': '50%' } },
      expected: { ...BASE_CAPACITY, memory: '4Gi' },
    },
    {
      name: 'ephemeral-storage: nodefs.available percentage',
      capacity: BASE_CAPACITY,
      r: { ...none, evictionHard: { 'nodefs.available': '10%' } },
      // 107374182400 - int64(107374182400 * float32(0.1)) = 107374182400 - 10737418400
      expected: { ...BASE_CAPACITY, 'ephemeral-storage': '96636764000' },
    },
    {
      name: 'ephemeral-storage: kube-reserved and nodefs.available quantity',
      capacity: BASE_CAPACITY,
      r: { ...none, kubeReserved: { 'ephemeral-storage': '8Gi' }, evictionHard: { 'nodefs.available': '2Gi' } },
      expected: { ...BASE_CAPACITY, 'ephemeral-storage': '90Gi' },
    },
    {
      name: 'other eviction signals do not reserve anything',
      capacity: BASE_CAPACITY,
      r: { ...none, evictionHard: { 'imagefs.available': '15%', 'nodefs.inodesFree': '5%', 'pid.available': '100' } },
      expected: BASE_CAPACITY,
    },
    {
      name: 'huge pages come out of memory',
      capacity: { ...BASE_CAPACITY, 'hugepages-2Mi': '1Gi', 'hugepages-1Gi': '2Gi' },
      r: { ...none, evictionHard: { 'memory.available': '100Mi' } },
      expected: { ...BASE_CAPACITY, memory: '5020Mi', 'hugepages-2Mi': '1Gi', 'hugepages-1Gi': '2Gi' },
    },
    {
      name: 'reservations above capacity floor at zero',
      capacity: BASE_CAPACITY,
      r: { ...none, systemReserved: { memory: '16Gi', cpu: '8' } },
      expected: { ...BASE_CAPACITY, memory: '0', cpu: '0' },
    },
    {
      name: 'huge pages larger than what is left floor memory at zero',
      capacity: { ...BASE_CAPACITY, 'hugepages-1Gi': '6Gi' },
      r: { ...none, systemReserved: { memory: '3Gi' } },
      expected: { ...BASE_CAPACITY, memory: '0', 'hugepages-1Gi': '6Gi' },
    },
    {
      name: 'pods keep their canonical DecimalSI form',
      capacity: { ...BASE_CAPACITY, pods: '1k' },
      r: { ...none, systemReserved: { memory: '1Gi' } },
      expected: { ...BASE_CAPACITY, pods: '1k', memory: '7Gi' },
    },
  ])('$name', ({ capacity, r, expected }) => {
    expect(nodeAllocatable(capacity, r)).toEqual(expected);
  });
});
