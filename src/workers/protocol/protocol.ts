/**
 * The one task protocol between the main thread and the worker pool. Both
 * sides import this file. Every request is a plain object with a `type`; every
 * response is a TaskResult: tasks never throw across the thread boundary, so a
 * rejected pool promise always means the worker itself failed (crash,
 * termination) and never a task error.
 */
import type { SerializedError } from '../../common/error-wire.js';
import type { MessagePort } from 'node:worker_threads';
import type { PlegEvent } from '../../runtime/pleg-event.js';
import type { KnownPodIds } from '../../runtime/types.js';
import type { GcContainer, GcRemoval, GcResult, GcSandbox } from './gc-wire.js';
import type { RotateLogsInput, RotateLogsResult } from '../logs/rotate-logs.js';
import type { CriStatsSnapshot, DiskUsage } from './stats-wire.js';
import type { SyncPodInput, SyncPodResult, TerminatePodInput, TerminatePodResult } from '../../pod/sync-types.js';

export interface PodRef {
  uid: string;
  name: string;
  namespace: string;
  /** Pod status cache slot allocated by the main thread for this uid. */
  slot: number;
  /** Record keys (from PLEG events) to resolve to full ids from the fetched status. */
  keys?: string[];
  /** The pod's ids from the relist that produced its events: inspected directly, without listing the pod again. */
  known?: KnownPodIds;
  /**
   * With `known`: when that relist started (epoch ms), before its lists. The status is timestamped then, not
   * when it is read, since what it lists is as of the relist (upstream timestamps before GetPodStatus lists):
   * a sync that ended in between must not take it for newer than its own changes.
   */
  listedAt?: number;
}

export type TaskRequest =
  | { type: 'ping' }
  | { type: 'relistLoop'; port: MessagePort }
  | { type: 'inspect'; pods: PodRef[] }
  | { type: 'syncPod'; input: SyncPodInput }
  | { type: 'terminatePod'; input: TerminatePodInput }
  | { type: 'removeContainers'; ids: string[]; containerLogsDir?: string }
  | { type: 'gcList' }
  | { type: 'gcRemove'; removal: GcRemoval }
  /** `procNetwork`: read the network of pods whose sandbox stats have none from /proc (the full summary only). */
  | { type: 'criStats'; procNetwork?: boolean }
  | { type: 'diskUsage'; paths: string[] }
  | { type: 'rotateLogs'; input: RotateLogsInput };

export interface RelistSummary {
  /** Pods the runtime reported. */
  podCount: number;
  /** Pods that got a record slot in this relist (first seen), with their names. */
  newPods: { uid: string; name: string; namespace: string }[];
  runningPods: number;
  containersByState: Record<'created' | 'running' | 'exited' | 'unknown', number>;
  /** Record table slots in use after the relist. */
  slotCount: number;
  /**
   * Pods the record table could not hold (CapacityError: table full, uid too
   * long, room for large pods used up), left out of this relist; the others
   * were recorded and diffed.
   */
  skipped: { uid: string; name: string; namespace: string; reason: string }[];
  /** The relist's events (upstream generateEvents over every pod's old and new records), keys in `data`. */
  events: PlegEvent[];
  /** For each pod with events that the runtime still lists: its ids, for inspection without a re-list. */
  known: Record<string, KnownPodIds>;
  /** Time in the worker, ms: the lists (received and decoded), the record write, the diff, and the whole task. */
  timings: { listMs: number; recordsMs: number; diffMs: number; workerMs: number };
}

/** What the relist loop (src/workers/relist/relist-loop.ts) tells the main thread after each relist. */
export interface RelistReport {
  /** The relist's start on the loop's clock, ms since the epoch (upstream's relist timestamp). */
  timestamp: number;
  /** Start and end of the relist in the loop's thread, epoch ms with sub-ms precision (comparable across threads). */
  startedAt: number;
  endedAt: number;
  /** The relist's time in the loop's thread, ms. */
  workerMs: number;
  /**
   * Nothing new (no events, no new pods, no held reinspections): the relist
   * ended in the loop's thread, which set the cache's global timestamp.
   */
  quiet: boolean;
  /** Absent when the list failed. */
  summary?: RelistSummary;
  error?: SerializedError;
}

/** The main thread's answer to a RelistReport. */
export interface RelistAck {
  /** The main thread holds work for the next relist (pods to reinspect): it must not end without it. */
  busy: boolean;
}

export interface RelistHandler {
  relisted(report: RelistReport): Promise<RelistAck>;
}

/** The relist loop's API (comlink in pool mode; the loop object itself inline). */
export interface RelistLoopApi {
  /** The handler every relist is reported to; set before start or relistNow. */
  attach(handler: RelistHandler): Promise<void>;
  /** Relists every periodMs (the period runs after each relist and its handling). */
  start(periodMs: number): Promise<void>;
  /** Relists after any relist in progress; resolves when the handler has finished with it. */
  relistNow(): Promise<void>;
  /** A new period; relists at once. */
  setPeriod(periodMs: number): Promise<void>;
  /** Ends the loop after the relist in progress. */
  stop(): Promise<void>;
}

export interface InspectOutcome {
  uid: string;
  /** undefined on success; the error otherwise (the pod is reinspected next relist). */
  error?: SerializedError;
  /** Requested keys that match a sandbox or container in the status → its full id. */
  ids?: Record<string, string>;
  /** The status had neither sandboxes nor containers: the pod is gone from the runtime. */
  empty?: boolean;
}

export interface TaskResults {
  ping: { threadId: number };
  relistLoop: { stopped: true };
  inspect: { outcomes: InspectOutcome[] };
  syncPod: SyncPodResult;
  terminatePod: TerminatePodResult;
  removeContainers: { removed: number };
  gcList: { containers: GcContainer[]; sandboxes: GcSandbox[] };
  gcRemove: GcResult;
  criStats: CriStatsSnapshot;
  diskUsage: DiskUsage[];
  rotateLogs: RotateLogsResult;
}

export type TaskType = TaskRequest['type'];
export type RequestOf<K extends TaskType> = Extract<TaskRequest, { type: K }>;

export type TaskResult<K extends TaskType> = { ok: true; value: TaskResults[K] } | { ok: false; error: SerializedError };

export function assertNever(x: never): never {
  throw new Error(`unhandled task type: ${JSON.stringify(x)}`);
}
