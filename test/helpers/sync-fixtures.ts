/** Pods, runtime statuses and a sync context over fakes, for the tests of the worker-side sync (syncPod, terminatePod). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ContainerStatus, PodStatus, SandboxStatus } from '../../src/runtime/types.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import { hashContainer } from '../../src/pod/container-hash.js';
import type { SyncContext } from '../../src/workers/sync/sync-pod.js';
import type { NodeInfo, SyncPodInput } from '../../src/pod/sync-types.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeCri } from '../fakes/fake-cri.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

export const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
export const logsRoot = mkdtempSync(join(tmpdir(), 'kts-sync-pod-'));
afterAll(() => rmSync(logsRoot, { recursive: true, force: true }));

export const node: NodeInfo = {
  name: 'n1',
  ip: '192.0.2.1',
  podLogsDir: logsRoot,
  containerLogsDir: '',
  clusterDNS: [],
  clusterDomain: '',
  resolvConf: '',
  memoryCapacityBytes: 8 * 1024 ** 3,
  allocatable: { cpu: '1500m', memory: '7Gi' },
};

export function makePod(spec: Record<string, unknown>, name = 'web'): Pod {
  return PodSchema.parse({
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
  });
}

let seq = 0;
export function container(pod: Pod, name: string, state: ContainerStatus['state'], over: Partial<ContainerStatus> = {}): ContainerStatus {
  const spec = [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])].find((c) => c.name === name)!;
  const createdAt = BigInt(++seq * 1000);
  return {
    id: `${name}-${seq}`,
    name,
    state,
    createdAt,
    startedAt: createdAt,
    finishedAt: state === 'exited' ? createdAt + 1n : 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: BUSYBOX,
    imageRef: BUSYBOX,
    restartCount: 0,
    hash: hashContainer(spec),
    sandboxId: 'sb-old',
    ...over,
  };
}

export function sandbox(id: string, state: SandboxStatus['state'], attempt = 0): SandboxStatus {
  return { id, state, createdAt: BigInt(attempt + 1), attempt, ips: state === 'ready' ? ['10.1.0.5'] : [], hostNetwork: false };
}

export function podStatus(pod: Pod, sandboxes: SandboxStatus[], containers: ContainerStatus[]): PodStatus {
  const m = pod.metadata;
  const ready = sandboxes.find((s) => s.state === 'ready');
  return {
    uid: m.uid!,
    name: m.name!,
    namespace: m.namespace!,
    ips: ready?.ips ?? [],
    sandboxStatuses: sandboxes,
    containerStatuses: containers,
    timestamp: 0,
  };
}

export function harness(status: PodStatus) {
  const cri = new FakeCri();
  const runtime = new FakeRuntime();
  runtime.statuses.set(status.uid, status);
  const clock = new FakeClock();
  const cache = PodStatusCache.create({ capacity: 4 });
  const ctx: SyncContext = { cri: cri.api, runtime, cache, clock, mounter: new FakeMounter() };
  const input = (pod: Pod): SyncPodInput => ({
    pod,
    slot: cache.allocate(pod.metadata.uid!),
    minTimestamp: 0,
    cacheUnreliable: true,
    backoff: {},
    node,
  });
  return { cri, runtime, clock, ctx, cache, input };
}

export const c = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: BUSYBOX,
  imagePullPolicy: 'IfNotPresent',
  ...extra,
});
