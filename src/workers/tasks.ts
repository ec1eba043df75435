/**
 * The task functions. Each is a plain function of its request plus the
 * TaskContext (one CRI client and the attached shared-memory views); the pool
 * worker (worker-entry.ts) and inline mode (task-runner.ts InlineRunner) call
 * exactly these. Tasks return TaskResult and never throw.
 */
import { LinuxMounter, type Mounter } from '../common/mounter.js';
import { realClock, type Clock } from '../common/clock.js';
import { KubeletTsError } from '../common/errors.js';
import { syncPod, terminatePod, type SyncContext } from './sync/sync-pod.js';
import { removeContainers } from './sync/kill-pod.js';
import { gcList, gcRemove } from './sync/container-gc.js';
import { rotateLogs, runningContainers } from './logs/rotate-logs.js';
import { criStats, SandboxesWithoutStats } from './stats/cri-stats.js';
import { PresentImages } from './sync/present-images.js';
import { diskUsage } from './stats/disk-usage.js';
import { CriClient } from '../cri/client.js';
import { CriRuntime } from '../runtime/cri-runtime.js';
import type { Runtime } from '../runtime/runtime.js';
import { serializeError } from '../common/error-wire.js';
import { serveRelistLoop } from './relist/relist-loop.js';
import { writeInspection } from './relist/write-inspection.js';
import { assertNever, type InspectOutcome, type PodRef, type TaskRequest, type TaskResult } from './protocol/protocol.js';
import type { WorkerInit } from '../shared/shared-state.js';
import { hasRuntimeState } from '../runtime/types.js';
import { ImagePullGate } from '../shared/image-pull-gate.js';
import { MetricBlock } from '../shared/metric-block.js';
import { PodStatusCache } from '../shared/pod-status-cache.js';
import { RelistRecordTable } from '../shared/relist-records.js';
import { idKey } from '../shared/id-key.js';
import { threadId } from 'node:worker_threads';
import { sharedRuntimeObserver } from '../shared/worker-metrics.js';
import { CrashArm, crashable } from '../shared/crash-arm.js';

export interface TaskContext {
  runtime: Runtime;
  /** Mounts for sync tasks (subPath binds). */
  mounter: Mounter;
  /** The CRI client behind `runtime`; undefined when a test injects a fake runtime (sync tasks then fail). */
  cri: CriClient | undefined;
  clock: Clock;
  cache: PodStatusCache;
  records: RelistRecordTable;
  metrics: MetricBlock;
  imagePullGate?: ImagePullGate;
  /** The sandboxes this thread's stats snapshots learnt the runtime cannot give stats for. */
  withoutStats: SandboxesWithoutStats;
  /** The images this thread's container starts found present moments ago. */
  presentImages: PresentImages;
  /** Test-only (fault suite): a crash armed for one task type. */
  crashArm?: CrashArm;
  close(): void;
}

export function createTaskContext(init: WorkerInit, runtime?: Runtime): TaskContext {
  const metrics = MetricBlock.attach(init.metrics);
  let cri: CriClient | undefined;
  if (!runtime) {
    cri = new CriClient({
      runtimeEndpoint: init.runtimeEndpoint,
      imageEndpoint: init.imageEndpoint,
      timeoutMs: init.runtimeRequestTimeoutMs,
      observer: sharedRuntimeObserver(metrics),
    });
    runtime = new CriRuntime(cri, realClock);
  }
  return {
    runtime,
    mounter: new LinuxMounter(),
    cri,
    clock: realClock,
    cache: PodStatusCache.attach(init.podCache),
    records: RelistRecordTable.attach(init.relistRecords),
    metrics,
    withoutStats: new SandboxesWithoutStats(),
    presentImages: new PresentImages(),
    ...(init.imagePullGate ? { imagePullGate: ImagePullGate.attach(init.imagePullGate) } : {}),
    ...(init.crashArm ? { crashArm: CrashArm.attach(init.crashArm) } : {}),
    close: () => cri?.close(),
  };
}

export async function runTask(ctx: TaskContext, request: TaskRequest): Promise<TaskResult<TaskRequest['type']>> {
  try {
    switch (request.type) {
      case 'ping':
        return { ok: true, value: { threadId } };
      case 'relistLoop':
        await serveRelistLoop(ctx, request.port);
        return { ok: true, value: { stopped: true } };
      case 'inspect':
        return { ok: true, value: { outcomes: await crashable(ctx.crashArm, 'inspect', inspect(ctx, request.pods)) } };
      case 'syncPod':
        return { ok: true, value: await crashable(ctx.crashArm, 'syncPod', syncPod(syncContext(ctx), request.input)) };
      case 'terminatePod':
        return { ok: true, value: await terminatePod(syncContext(ctx), request.input) };
      case 'removeContainers':
        return { ok: true, value: { removed: await removeContainers(syncContext(ctx).cri, request.ids, request.containerLogsDir) } };
      case 'gcList':
        return { ok: true, value: await gcList(syncContext(ctx).cri) };
      case 'gcRemove':
        return { ok: true, value: await gcRemove(syncContext(ctx).cri, request.removal) };
      case 'criStats':
        return {
          ok: true,
          value: await criStats(syncContext(ctx).cri, { procNetwork: request.procNetwork, withoutStats: ctx.withoutStats }),
        };
      case 'diskUsage':
        return { ok: true, value: await diskUsage(request.paths) };
      case 'rotateLogs':
        return { ok: true, value: await rotateLogs(syncContext(ctx).cri, runningContainers(ctx.cache), request.input) };
      default:
        return assertNever(request);
    }
  } catch (err) {
    return { ok: false, error: serializeError(err) };
  }
}

function syncContext(ctx: TaskContext): SyncContext {
  if (!ctx.cri) throw new KubeletTsError('sync tasks need a CRI client; this task context was built with an injected runtime');
  return {
    cri: ctx.cri,
    runtime: ctx.runtime,
    cache: ctx.cache,
    clock: ctx.clock,
    mounter: ctx.mounter,
    pullGate: ctx.imagePullGate,
    presentImages: ctx.presentImages,
  };
}

/** GetPodStatus for each pod (reusing its cached status where the relist saw no change), concurrently, writing each into its cache slot. */
async function inspect(ctx: TaskContext, pods: PodRef[]): Promise<InspectOutcome[]> {
  return Promise.all(
    pods.map(async (p): Promise<InspectOutcome> => {
      try {
        // The cached status lets the runtime skip objects whose listed state is unchanged.
        const previous = p.known ? ctx.cache.read(p.slot, p.uid) : undefined;
        const status = await ctx.runtime.getPodStatus(p.uid, p.name, p.namespace, p.known, previous);
        // Read by the relist's ids: as of the relist's lists (PodRef.listedAt), not of this read.
        if (p.known && p.listedAt !== undefined && p.listedAt < status.timestamp) status.timestamp = p.listedAt;
        const written = writeInspection(ctx.cache, p.slot, status);
        const outcome: InspectOutcome = { uid: p.uid, empty: !hasRuntimeState(written) };
        if (p.keys?.length) {
          const wanted = new Set(p.keys);
          const ids: Record<string, string> = {};
          for (const { id } of [...written.sandboxStatuses, ...written.containerStatuses]) {
            const key = idKey(id);
            if (wanted.has(key)) ids[key] = id;
          }
          outcome.ids = ids;
        }
        return outcome;
      } catch (err) {
        return { uid: p.uid, error: serializeError(err) };
      }
    }),
  );
}
