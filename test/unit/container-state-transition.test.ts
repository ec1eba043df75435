import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/pod.js';
import type { ContainerStatus, PodStatus } from '../../src/api/pod-status.js';
import { checkContainerStateTransition } from '../../src/main/status/container-state-transition.js';

type State = 'waiting' | 'running' | 'exit0' | 'exit1';
const status = (name: string, state: State): ContainerStatus => ({
  name,
  ready: false,
  restartCount: 0,
  image: 'i',
  imageID: '',
  state:
    state === 'waiting'
      ? { waiting: { reason: 'ContainerCreating' } }
      : state === 'running'
        ? { running: { startedAt: '2026-01-01T00:00:00Z' } }
        : { terminated: { exitCode: state === 'exit0' ? 0 : 1 } },
});
const spec = (restartPolicy: string, initContainers: Container[] = []): Pod['spec'] => ({
  restartPolicy,
  initContainers,
  containers: [{ name: 'app', image: 'i' }],
});
const regular = (from: State, to: State): [PodStatus, PodStatus] => [
  { containerStatuses: [status('app', from)] },
  { containerStatuses: [status('app', to)] },
];
const init = (from: State, to: State): [PodStatus, PodStatus] => [
  { initContainerStatuses: [status('init', from)] },
  { initContainerStatuses: [status('init', to)] },
];

const ILLEGAL = 'terminated container app attempted illegal transition to non-terminated state';
const ILLEGAL_INIT = 'terminated init container init attempted illegal transition to non-terminated state';

// Upstream's rule (status_manager.go checkContainerStateTransition), case by case.
describe('checkContainerStateTransition', () => {
  it.each<{ policy: string; from: State; to: State; want?: string }>([
    // Always: every transition is allowed, terminated ones included.
    { policy: 'Always', from: 'exit0', to: 'running' },
    { policy: 'Always', from: 'exit1', to: 'waiting' },
    // OnFailure: a failed container may restart, a succeeded one may not.
    { policy: 'OnFailure', from: 'exit1', to: 'running' },
    { policy: 'OnFailure', from: 'exit1', to: 'waiting' },
    { policy: 'OnFailure', from: 'exit0', to: 'running', want: ILLEGAL },
    { policy: 'OnFailure', from: 'exit0', to: 'waiting', want: ILLEGAL },
    { policy: 'OnFailure', from: 'exit0', to: 'exit0' },
    // Never: no terminated container comes back.
    { policy: 'Never', from: 'exit0', to: 'running', want: ILLEGAL },
    { policy: 'Never', from: 'exit1', to: 'running', want: ILLEGAL },
    { policy: 'Never', from: 'exit1', to: 'waiting', want: ILLEGAL },
    { policy: 'Never', from: 'exit1', to: 'exit1' },
    { policy: 'Never', from: 'exit0', to: 'exit1' },
    // Containers that were not terminated move freely.
    { policy: 'Never', from: 'running', to: 'exit0' },
    { policy: 'Never', from: 'waiting', to: 'running' },
    { policy: 'Never', from: 'running', to: 'waiting' },
  ])('regular container, $policy: $from → $to', ({ policy, from, to, want }) => {
    const [old, next] = regular(from, to);
    expect(checkContainerStateTransition(old, next, spec(policy))).toBe(want);
  });

  it.each<{ policy: string; sidecar?: boolean; from: State; to: State; want?: string }>([
    { policy: 'Never', from: 'exit0', to: 'running', want: ILLEGAL_INIT },
    { policy: 'Never', from: 'exit1', to: 'waiting', want: ILLEGAL_INIT },
    { policy: 'OnFailure', from: 'exit1', to: 'running' },
    { policy: 'OnFailure', from: 'exit0', to: 'waiting', want: ILLEGAL_INIT },
    { policy: 'Always', from: 'exit0', to: 'running' },
    // A sidecar (restartable init container) may always restart (today's upstream; v1.20.2 has no sidecars).
    { policy: 'Never', sidecar: true, from: 'exit0', to: 'running' },
    { policy: 'OnFailure', sidecar: true, from: 'exit1', to: 'waiting' },
  ])('init container, $policy, sidecar $sidecar: $from → $to', ({ policy, sidecar, from, to, want }) => {
    const [old, next] = init(from, to);
    const c: Container = { name: 'init', image: 'i', ...(sidecar ? { restartPolicy: 'Always' } : {}) };
    expect(checkContainerStateTransition(old, next, spec(policy, [c]))).toBe(want);
  });

  it('a container missing from the new status is not a transition', () => {
    expect(checkContainerStateTransition(regular('exit0', 'exit0')[0], {}, spec('Never'))).toBeUndefined();
  });

  it('init container statuses out of spec order are refused, as upstream GetContainerByIndex', () => {
    const [old, next] = init('exit0', 'exit0');
    expect(checkContainerStateTransition(old, next, spec('Never', [{ name: 'other', image: 'i' }]))).toBe(
      'found mismatch between pod spec and status, container: init',
    );
  });
});
