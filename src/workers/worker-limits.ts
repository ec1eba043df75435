/**
 * V8 heap limits for every worker thread kubelet-ts starts (the piscina pool,
 * the prober thread, the container-events thread).
 *
 * The young generation is capped at 3 MiB (one 1 MiB semi-space pair plus
 * its large-object space): V8 otherwise grows it to 48 MiB per isolate during
 * a burst (pod spawn, churn) and keeps much of it resident afterwards. The
 * tasks allocate short-lived CRI messages only, so a small young generation
 * costs more frequent but shorter scavenges. `npm run bench -- memory` shows
 * the effect on resident memory. It is also V8's floor: any limit up to 3 MiB
 * gives the same two 1 MiB semi-spaces (new_space measured 2 MiB for 0.75, 1.5
 * and 3), so a small maxPods cannot shrink it further.
 *
 * The pool's threads get 3 MiB more for every POOL_PODS_PER_STEP of maxPods
 * above the first: a relist decodes both of the runtime's lists whole, and
 * with 1 MiB semi-spaces the lists of 1000 pods outlive the scavenges made
 * while they are decoded (the A/B is in docs/architecture.md, Memory).
 */
import type { ResourceLimits } from 'node:worker_threads';

export const WORKER_YOUNG_GENERATION_MB = 3;

export const WORKER_RESOURCE_LIMITS: ResourceLimits = Object.freeze({
  maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
});

/** maxPods served by each WORKER_YOUNG_GENERATION_MB of a pool thread's young generation. */
export const POOL_PODS_PER_STEP = 250;
/** The most a pool thread's young generation grows to (reached at 2000 pods). */
export const POOL_YOUNG_GENERATION_MAX_MB = 24;

/** The pool's threads' limits for a node of `maxPods`: 3 MiB up to 250 pods, 12 at 1000, 24 from 2000. */
export function poolResourceLimits(maxPods: number): ResourceLimits {
  const steps = Math.ceil(Math.max(1, maxPods) / POOL_PODS_PER_STEP);
  return { maxYoungGenerationSizeMb: Math.min(POOL_YOUNG_GENERATION_MAX_MB, WORKER_YOUNG_GENERATION_MB * steps) };
}
