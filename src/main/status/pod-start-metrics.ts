/**
 * Pod start-up metrics (upstream kubelet_pod_start_duration_seconds and the
 * pod start-up latency tracker behind kubelet_pod_start_sli_duration_seconds):
 * - start duration: from the kubelet first seeing the pod (config.seen) to the
 *   first status it generates with phase Running; once per pod.
 * - SLI: from the pod's creationTimestamp to when the kubelet observes, on the
 *   apiserver watch, the pod Running with every container started, minus the
 *   time spent pulling images (first pull start to last pull end); once per pod,
 *   for pods from the apiserver first seen on the watch before the kubelet gave
 *   them a startTime (so pods running before a restart are not counted).
 * Main thread only; `forget` drops a pod's state when it goes.
 */
import { Histogram, type Registry } from 'prom-client';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import { POD_STARTUP_BUCKETS } from '../../common/buckets.js';
import { CONFIG_SEEN_ANNOTATION } from '../podconfig/types.js';

interface SliState {
  observed?: boolean;
  firstPullStart?: number;
  lastPullEnd?: number;
}

export class PodStartMetrics {
  private readonly running = new Set<string>();
  private readonly sliPods = new Map<string, SliState>();
  private readonly start: Histogram;
  private readonly sli: Histogram;

  constructor(registry: Registry) {
    this.start = new Histogram({
      name: 'kubelet_pod_start_duration_seconds',
      help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
      buckets: POD_STARTUP_BUCKETS,
      registers: [registry],
    });
    this.sli = new Histogram({
      name: 'kubelet_pod_start_sli_duration_seconds',
      help: 'Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
      buckets: POD_STARTUP_BUCKETS,
      registers: [registry],
    });
  }

  /** A status the kubelet generated for the pod. */
  statusGenerated(pod: Pod, status: ApiPodStatus, now: number): void {
    const uid = pod.metadata.uid ?? '';
    if (this.running.has(uid) || status.phase !== 'Running') return;
    this.running.add(uid);
    const seen = Date.parse(pod.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? '');
    if (Number.isFinite(seen)) this.start.observe(Math.max(0, now - seen) / 1000);
  }

  /** An image pull of the pod ran from `startMs` to `endMs`. */
  imagePulled(uid: string, startMs: number, endMs: number): void {
    const s = this.sliPods.get(uid);
    if (!s) return;
    s.firstPullStart = Math.min(s.firstPullStart ?? startMs, startMs);
    s.lastPullEnd = Math.max(s.lastPullEnd ?? endMs, endMs);
  }

  /** The pod as the apiserver watch delivered it (upstream ObservedPodOnWatch). */
  observedOnWatch(pod: Pod, now: number): void {
    const uid = pod.metadata.uid ?? '';
    const st = pod.status;
    if (st?.phase === 'Succeeded' || st?.phase === 'Failed') {
      this.sliPods.delete(uid);
      return;
    }
    const s = this.sliPods.get(uid);
    if (!s) {
      if (!st?.startTime) this.sliPods.set(uid, {});
      return;
    }
    if (st?.phase !== 'Running') return;
    const started = (pod.spec.containers ?? []).every((c) => {
      const cs = st.containerStatuses?.find((x) => x.name === c.name);
      return cs?.started === true || cs?.state?.running !== undefined;
    });
    if (!started || s.observed) return;
    s.observed = true;
    const created = Date.parse(pod.metadata.creationTimestamp ?? '');
    if (!Number.isFinite(created)) return;
    const pulling = s.firstPullStart !== undefined && s.lastPullEnd !== undefined ? s.lastPullEnd - s.firstPullStart : 0;
    this.sli.observe(Math.max(0, now - created - pulling) / 1000);
  }

  forget(uid: string): void {
    this.running.delete(uid);
    this.sliPods.delete(uid);
  }
}
