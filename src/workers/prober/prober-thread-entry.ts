/**
 * Entry of the prober thread: one ProberHost with its own CRI client (exec
 * probes) and a read-only view of the pod status cache, serving
 * ProberThreadApi to the main thread through comlink (prober-protocol.ts).
 */
import * as Comlink from 'comlink';
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import { nodeEndpoint } from '../../common/comlink-node.js';
import { PodStatusCache } from '../../shared/pod-status-cache.js';
import { CacheStatusSource } from '../../prober/cache-status-source.js';
import { ProberHost, type ProberBatch } from '../../prober/prober-host.js';
import type { ProberInit, ProberThreadApi } from '../protocol/prober-protocol.js';
import { runProbe } from '../../prober/run-probe.js';
import { errorMessage } from '../../common/error-message.js';

const init = workerData as ProberInit;
const cri = new CriClient({ runtimeEndpoint: init.runtimeEndpoint, timeoutMs: init.runtimeRequestTimeoutMs });
const statuses = new CacheStatusSource(PodStatusCache.attach(init.podCache), realClock);
const runCtx = { cri, clock: realClock, runtimeRequestTimeoutMs: init.runtimeRequestTimeoutMs };
let onBatch: ((batch: ProberBatch) => void) | undefined;
const host = new ProberHost({
  clock: realClock,
  nodeIP: init.nodeIP,
  statusOf: (uid) => statuses.statusOf(uid),
  probe: (type, spec, target) => runProbe(runCtx, type, spec, target),
  // A proxied call returns a promise; the main thread handles batches without answering.
  emit: (batch) => void Promise.resolve(onBatch?.(batch)).catch(() => undefined),
});

const api: ProberThreadApi = {
  attach: (fn) => void (onBatch = fn),
  addPod: (pod) => host.addPod(pod),
  stopLivenessAndStartup: (uid) => host.stopLivenessAndStartup(uid),
  removePod: (uid) => host.removePod(uid),
  cleanupPods: (uids) => host.cleanupPods(uids),
  trigger: (uid, container, probeType) => host.trigger(uid, container, probeType),
  metricsText: () => host.registry.metrics().catch((err: unknown) => `# metrics failed: ${errorMessage(err)}\n`),
};
Comlink.expose(api, nodeEndpoint(parentPort!));
