import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ObjectReference } from '../../src/api/cluster.js';
import type { ProberChannel } from '../../src/main/prober/prober-channel.js';
import { ProberManager, toProbePod } from '../../src/main/prober/prober-manager.js';
import type { ProbeResult } from '../../src/main/sync-loop/sync-loop-queue.js';
import type { ContainerStatus, PodStatus } from '../../src/runtime/types.js';
import type { ProberBatch } from '../../src/prober/prober-host.js';
import type { ProbePod, ProbeResultChange } from '../../src/prober/probe-types.js';

class RecordingChannel implements ProberChannel {
  readonly calls: string[] = [];
  addPod(pod: ProbePod) {
    this.calls.push(`add ${pod.uid} ${pod.containers.map((c) => c.name).join(',')}`);
  }
  stopLivenessAndStartup(uid: string) {
    this.calls.push(`stopLS ${uid}`);
  }
  removePod(uid: string) {
    this.calls.push(`remove ${uid}`);
  }
  cleanupPods(uids: string[]) {
    this.calls.push(`cleanup ${uids.join(',')}`);
  }
  trigger(uid: string, container: string, type: string) {
    this.calls.push(`trigger ${uid} ${container} ${type}`);
  }
  async metricsText() {
    return '';
  }
  async close() {}
}

const probe = { exec: { command: ['true'] } };
const webPod = (): Pod =>
  PodSchema.parse({
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: {
      initContainers: [
        { name: 'side', image: 'b', restartPolicy: 'Always', startupProbe: probe },
        { name: 'init', image: 'b', readinessProbe: probe },
      ],
      containers: [
        {
          name: 'app',
          image: 'b',
          readinessProbe: probe,
          startupProbe: probe,
          env: [
            { name: 'A', value: '1' },
            { name: 'B', valueFrom: {} },
          ],
        },
        { name: 'plain', image: 'b' },
      ],
    },
  });

function ctr(id: string, name: string, state: ContainerStatus['state'], createdAt = 1n): ContainerStatus {
  return {
    id,
    name,
    state,
    createdAt,
    startedAt: createdAt,
    finishedAt: 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'b',
    imageRef: 'b',
    restartCount: 0,
    hash: '',
    sandboxId: 'sb',
  };
}
const runtime = (...c: ContainerStatus[]): PodStatus => ({
  uid: 'u1',
  name: 'web',
  namespace: 'default',
  ips: [],
  sandboxStatuses: [],
  containerStatuses: c,
  timestamp: 0,
});

function setup() {
  const channel = new RecordingChannel();
  let deliver: (b: ProberBatch) => void = () => undefined;
  const queued: ProbeResult[] = [];
  const events: { ref: ObjectReference; reason: string; message: string }[] = [];
  const pods = new Map<string, Pod>();
  let opened = 0;
  const m = new ProberManager({
    channel: (onBatch) => {
      opened++;
      deliver = onBatch;
      return channel;
    },
    queue: { pushProbe: (r) => queued.push(r) },
    recorder: { record: (ref, _type, reason, message) => events.push({ ref, reason, message }) },
    podOf: (uid) => pods.get(uid),
    logger: pino({ level: 'silent' }),
  });
  const send = (...results: ProbeResultChange[]) => deliver({ results, events: [], logs: [] });
  return { m, channel, queued, events, pods, send, deliver: (b: ProberBatch) => deliver(b), opened: () => opened };
}

const change = (
  containerId: string,
  container: string,
  probeType: ProbeResultChange['probeType'],
  result?: ProbeResultChange['result'],
) => ({
  podUid: 'u1',
  container,
  containerId,
  probeType,
  ...(result && { result }),
});

describe('toProbePod', () => {
  it('keeps containers and sidecars with probes, static env only; none → undefined', () => {
    const p = toProbePod(webPod())!;
    expect(p.containers.map((c) => [c.name, c.sidecar])).toEqual([
      ['app', false],
      ['side', true],
    ]);
    expect(p.containers[0].env).toEqual([{ name: 'A', value: '1' }]);
    expect(toProbePod(PodSchema.parse({ metadata: { uid: 'x' }, spec: { containers: [{ name: 'a' }] } }))).toBeUndefined();
  });
});

describe('ProberManager', () => {
  it('opens the prober host only for the first pod with a probe', async () => {
    const s = setup();
    const plain = PodSchema.parse({
      metadata: { name: 'p', namespace: 'default', uid: 'u2' },
      spec: { containers: [{ name: 'a', image: 'b' }] },
    });
    s.m.addPod(plain);
    s.m.removePod('u2');
    s.m.cleanupPods([]);
    expect(await s.m.metricsText()).toBe('');
    expect(s.opened()).toBe(0);
    s.m.addPod(webPod());
    s.m.addPod(plain);
    expect(s.opened()).toBe(1);
    expect(s.channel.calls[0]).toMatch(/^add u1/);
  });

  it('lifecycle calls reach the host once per pod', () => {
    const s = setup();
    s.m.addPod(webPod());
    s.m.addPod(webPod());
    s.m.stopLivenessAndStartup('u1');
    s.m.removePod('u1');
    s.m.removePod('u1');
    s.m.addPod(webPod());
    s.m.cleanupPods(['u1']);
    s.m.cleanupPods([]);
    expect(s.channel.calls).toEqual(['add u1 app,side', 'stopLS u1', 'remove u1', 'add u1 app,side', 'cleanup ']);
  });

  it('result changes become syncLoop events as upstream: readiness and startup always, liveness on Failure only', () => {
    const s = setup();
    s.m.addPod(webPod()); // opens the prober host
    s.send(
      change('c1', 'app', 'Readiness', 'Failure'),
      change('c1', 'app', 'Liveness', 'Success'),
      change('c1', 'app', 'Liveness', 'Failure'),
      change('c1', 'app', 'Startup', 'Success'),
      change('c1', 'app', 'Readiness'),
    );
    expect(s.queued).toEqual([
      { podUid: 'u1', container: 'app', probe: 'readiness', success: false },
      { podUid: 'u1', container: 'app', probe: 'liveness', success: false },
      { podUid: 'u1', container: 'app', probe: 'startup', success: true },
    ]);
  });

  it('syncInputs: the instances whose liveness or startup failed, and the started ones', () => {
    const s = setup();
    s.m.addPod(webPod()); // opens the prober host
    s.send(
      change('c1', 'app', 'Liveness', 'Failure'),
      change('c2', 'side', 'Startup', 'Success'),
      change('c3', 'side', 'Startup', 'Failure'),
    );
    expect(s.m.syncInputs('u1')).toEqual({ livenessFailed: ['c1'], startupFailed: ['c3'], startupSucceeded: ['c2'] });
    s.send(change('c1', 'app', 'Liveness'), change('c2', 'side', 'Startup'), change('c3', 'side', 'Startup'));
    expect(s.m.syncInputs('u1')).toEqual({ livenessFailed: [], startupFailed: [], startupSucceeded: [] });
  });

  it('statusInputs (UpdatePodStatus): started from the startup result, ready from a readiness Success; a run is triggered otherwise', () => {
    const s = setup();
    s.m.addPod(webPod());
    const pod = webPod();
    const rt = runtime(ctr('old', 'app', 'exited', 1n), ctr('c1', 'app', 'running', 2n), ctr('s1', 'side', 'running'));
    // No results yet: startup workers exist, so nothing counts as started.
    expect(s.m.statusInputs(pod, rt)).toEqual({
      startup: new Map([
        ['app', false],
        ['side', false],
      ]),
      readiness: new Map(),
    });
    s.send(
      change('c1', 'app', 'Startup', 'Success'),
      change('c1', 'app', 'Readiness', 'Failure'),
      change('old', 'app', 'Readiness', 'Success'),
    );
    s.channel.calls.length = 0;
    expect(s.m.statusInputs(pod, rt).readiness.get('app')).toBe(false);
    expect(s.channel.calls).toEqual(['trigger u1 app Readiness']);
    s.send(change('c1', 'app', 'Readiness', 'Success'));
    expect(s.m.statusInputs(pod, rt).readiness.get('app')).toBe(true);
    // Without workers (pod removed) a container without a result is started and ready, as upstream.
    s.m.removePod('u1');
    s.send(change('c1', 'app', 'Startup'), change('c1', 'app', 'Readiness'));
    const after = s.m.statusInputs(pod, rt);
    expect([after.startup.get('app'), after.readiness.get('app')]).toEqual([true, true]);
  });

  it('events are recorded against the container; unknown pods get a reference from the batch', () => {
    const s = setup();
    s.m.addPod(webPod()); // opens the prober host
    s.pods.set('u1', { ...webPod(), metadata: { ...webPod().metadata, resourceVersion: '7' } });
    const e = { podUid: 'u1', podName: 'web', namespace: 'default', container: 'side', init: true, type: 'Warning' as const };
    s.deliver({
      results: [],
      events: [
        { ...e, reason: 'Unhealthy', message: 'Startup probe failed: nope' },
        { ...e, podUid: 'gone', podName: 'old', container: 'app', init: false, reason: 'ProbeWarning', message: 'w' },
      ],
      logs: [],
    });
    expect(s.events).toEqual([
      {
        ref: {
          kind: 'Pod',
          apiVersion: 'v1',
          namespace: 'default',
          name: 'web',
          uid: 'u1',
          resourceVersion: '7',
          fieldPath: 'spec.initContainers{side}',
        },
        reason: 'Unhealthy',
        message: 'Startup probe failed: nope',
      },
      {
        ref: { kind: 'Pod', apiVersion: 'v1', namespace: 'default', name: 'old', uid: 'gone', fieldPath: 'spec.containers{app}' },
        reason: 'ProbeWarning',
        message: 'w',
      },
    ]);
  });
});
