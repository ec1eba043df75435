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
 */
import type { ResourceLimits } from 'node:worker_threads';

export const WORKER_YOUNG_GENERATION_MB = 3;

export const WORKER_RESOURCE_LIMITS: ResourceLimits = Object.freeze({
  maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
});
