/**
 * Entry of the prober thread: one ProberHost with its own CRI client (exec
 * probes) and a read-only view of the pod status cache, driven by
 * ProberCommand messages from the main thread (see prober-protocol.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import { PodStatusCache } from '../shared/pod-status-cache.js';
import { CacheStatusSource } from './cache-status-source.js';
import { ProberHost } from './prober-host.js';
import type { ProberCommand, ProberInit, ProberMessage } from './prober-protocol.js';
import { runProbe } from './run-probe.js';

const init = workerData as ProberInit;
const port = parentPort!;
const send = (m: ProberMessage) => port.postMessage(m);
const cri = new CriClient({ runtimeEndpoint: init.runtimeEndpoint, timeoutMs: init.runtimeRequestTimeoutMs });
const statuses = new CacheStatusSource(PodStatusCache.attach(init.podCache), realClock);
const runCtx = { cri, clock: realClock, runtimeRequestTimeoutMs: init.runtimeRequestTimeoutMs };
const host = new ProberHost({
  clock: realClock,
  nodeIP: init.nodeIP,
  statusOf: (uid) => statuses.statusOf(uid),
  probe: (type, spec, target) => runProbe(runCtx, type, spec, target),
  emit: (batch) => send({ type: 'batch', batch }),
});

port.on('message', (cmd: ProberCommand) => {
  switch (cmd.type) {
    case 'addPod':
      return host.addPod(cmd.pod);
    case 'stopLivenessAndStartup':
      return host.stopLivenessAndStartup(cmd.uid);
    case 'removePod':
      return host.removePod(cmd.uid);
    case 'cleanupPods':
      return host.cleanupPods(cmd.uids);
    case 'trigger':
      return host.trigger(cmd.uid, cmd.container, cmd.probeType);
    case 'metrics':
      host.registry
        .metrics()
        .then((text) => send({ type: 'metrics', id: cmd.id, text }))
        .catch((err: unknown) => send({ type: 'metrics', id: cmd.id, text: `# metrics failed: ${String(err)}\n` }));
      return;
    default: {
      const never: never = cmd;
      throw new Error(`unknown prober command ${JSON.stringify(never)}`);
    }
  }
});
