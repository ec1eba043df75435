/**
 * One probe worker: periodic probing of one probe type of one container
 * (upstream pkg/kubelet/prober/worker.go). Runs on the prober host's thread.
 *
 * Schedule (upstream run): when the prober started less than one period ago
 * (a kubelet restart), the first probe waits a random part of the period, so
 * a node full of pods does not probe everything at once; then it probes on a
 * ticker of periodSeconds. A tick that passes while a probe runs is kept
 * (Go's ticker buffers one), a manual trigger runs the probe as soon as the
 * current one ends, and stop() ends the worker after the current probe.
 *
 * doProbe, in upstream's order: no pod status → wait; target container
 * missing → wait; a new container instance → its result starts at the
 * initial value (readiness Failure, liveness Success, startup Unknown) and
 * probing resumes; on hold (after a liveness/startup failure) → wait for the
 * next instance; not running → Failure, and stop for good when it exited
 * under restartPolicy Never (not for sidecars); the pod was being deleted →
 * liveness/startup report Success and stop; within initialDelaySeconds →
 * wait; startup probes stop once started, the others wait until started;
 * then probe, and record the result once successThreshold / failureThreshold
 * consecutive runs agree.
 */
import type { Probe } from '../api/pod.js';
import type { Clock } from '../common/clock.js';
import type { ProbeAttempt, ProbeTarget } from './run-probe.js';
import type { ProbeContainer, ProbePod, ProbeType, ResultValue } from './probe-types.js';

/** The current instance of the probed container, from the runtime status. */
export interface ContainerView {
  id: string;
  running: boolean;
  exited: boolean;
  /** ms since the epoch; 0 when unknown. */
  startedAtMs: number;
}

export interface WorkerHost {
  readonly clock: Clock;
  /** When the prober started (ms). */
  readonly startedAt: number;
  random(): number;
  /** The pod's IP and the container's newest instance; undefined while the pod has no status. */
  view(pod: ProbePod, container: string): { podIP: string; container?: ContainerView } | undefined;
  /** The container instance counts as started (its startup probe succeeded, or it has none). */
  started(podUid: string, container: string, containerId: string): boolean;
  setResult(worker: ProbeWorker, containerId: string, result: ResultValue): void;
  removeResult(worker: ProbeWorker, containerId: string): void;
  probe(type: ProbeType, spec: Probe, target: ProbeTarget): Promise<ProbeAttempt>;
  /** A finished run (for metrics, events and logs). */
  observed(worker: ProbeWorker, attempt: ProbeAttempt, seconds: number): void;
  /** The worker ended (stopped, or the container will not run again). */
  exited(worker: ProbeWorker): void;
}

const INITIAL_VALUE: Record<ProbeType, ResultValue> = { Readiness: 'Failure', Liveness: 'Success', Startup: 'Unknown' };

export class ProbeWorker {
  readonly key: string;
  private containerId = '';
  private lastResult: ResultValue | undefined;
  private resultRun = 0;
  private onHold = false;
  private stopped = false;
  private probing = false;
  private triggered = false;
  private cancelTimer: (() => void) | undefined;
  private nextTick = 0;
  private done = false;

  constructor(
    private readonly host: WorkerHost,
    readonly pod: ProbePod,
    readonly container: ProbeContainer,
    readonly type: ProbeType,
    readonly spec: Probe,
  ) {
    this.key = `${pod.uid}/${container.name}/${type}`;
  }

  private get periodMs(): number {
    return Math.max(1, this.spec.periodSeconds ?? 10) * 1000;
  }

  /** The container instance this worker last saw ('' before any). */
  get currentContainerId(): string {
    return this.containerId;
  }

  start(): void {
    const { clock } = this.host;
    const now = clock.now();
    const delay = this.periodMs > now - this.host.startedAt ? Math.floor(this.host.random() * this.periodMs) : 0;
    this.nextTick = now + delay + this.periodMs;
    this.schedule(delay, false);
  }

  /** Upstream manualTriggerCh: probe now, or right after the probe in progress. */
  trigger(): void {
    if (this.stopped || this.done) return;
    if (this.probing) {
      this.triggered = true;
      return;
    }
    this.schedule(0, false);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (!this.probing) this.finish();
  }

  /**
   * Runs tick() in `ms`. `forTick`: the timer stands for the ticker's next
   * tick (nextTick), which the probe then consumes even when the timer fires
   * a little before it (Node timers run on the loop's cached time, so they
   * can fire a few ms early by the clock); otherwise the probe would run
   * across nextTick and count it as a tick that passed during the probe,
   * probing twice in that period.
   */
  private schedule(ms: number, forTick: boolean): void {
    this.cancelTimer?.();
    this.cancelTimer = this.host.clock.setTimer(ms, () => {
      this.cancelTimer = undefined;
      this.tick(forTick);
    });
  }

  private tick(forTick: boolean): void {
    if (this.stopped || this.done || this.probing) return;
    this.probing = true;
    const started = this.host.clock.now();
    if (forTick && this.nextTick > started) this.nextTick += this.periodMs;
    this.doProbe().then(
      (keepGoing) => this.afterProbe(started, keepGoing),
      () => this.afterProbe(started, true), // upstream HandleCrash: keep going
    );
  }

  private afterProbe(started: number, keepGoing: boolean): void {
    this.probing = false;
    if (this.stopped || !keepGoing) return this.finish();
    const now = this.host.clock.now();
    // Go's ticker keeps one tick that passed during the probe; later ones are dropped.
    let tickPassed = false;
    while (this.nextTick <= now) {
      if (this.nextTick > started) tickPassed = true;
      this.nextTick += this.periodMs;
    }
    if (this.triggered || tickPassed) {
      this.triggered = false;
      this.schedule(0, false);
    } else {
      this.schedule(this.nextTick - now, true);
    }
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.containerId) this.host.removeResult(this, this.containerId);
    this.host.exited(this);
  }

  /** Upstream doProbe; returns whether the worker keeps going. */
  async doProbe(): Promise<boolean> {
    const h = this.host;
    const view = h.view(this.pod, this.container.name);
    if (!view) return true; // no status for the pod yet
    const c = view.container;
    if (!c || !c.id) return true; // the container was not created yet, or was removed

    if (this.containerId !== c.id) {
      if (this.containerId) h.removeResult(this, this.containerId);
      this.containerId = c.id;
      h.setResult(this, c.id, INITIAL_VALUE[this.type]);
      this.onHold = false; // a new instance: resume probing
    }
    if (this.onHold) return true;

    if (!c.running) {
      h.setResult(this, c.id, 'Failure');
      // Abort when the container will not be restarted.
      return !c.exited || this.pod.restartPolicy !== 'Never' || this.container.sidecar;
    }

    if (this.pod.deletionTimestamp && (this.type === 'Liveness' || this.type === 'Startup')) {
      h.setResult(this, c.id, 'Success'); // a quiet shutdown
      return false;
    }

    const initialDelay = this.spec.initialDelaySeconds ?? 0;
    if (c.startedAtMs > 0 && Math.floor((h.clock.now() - c.startedAtMs) / 1000) < initialDelay) return true;

    if (h.started(this.pod.uid, this.container.name, c.id)) {
      if (this.type === 'Startup') return true; // kept for the next instance
    } else if (this.type !== 'Startup') {
      return true; // wait for the startup probe
    }

    const began = h.clock.now();
    const attempt = await h.probe(this.type, this.spec, {
      podName: this.pod.name,
      namespace: this.pod.namespace,
      container: this.container,
      containerId: c.id,
      podIP: view.podIP,
    });
    h.observed(this, attempt, (h.clock.now() - began) / 1000);
    if (this.stopped) return false;
    const result = attempt.result;
    if (result === undefined) return true; // the probe errored: the result is thrown away

    if (this.lastResult === result) this.resultRun++;
    else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    const failureThreshold = this.spec.failureThreshold ?? 3;
    const successThreshold = this.spec.successThreshold ?? 1;
    if ((result === 'Failure' && this.resultRun < failureThreshold) || (result === 'Success' && this.resultRun < successThreshold)) {
      return true;
    }
    h.setResult(this, c.id, result);
    if ((this.type === 'Liveness' || this.type === 'Startup') && result === 'Failure') {
      // The container will be restarted: stop probing until a new instance shows up.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }
}
