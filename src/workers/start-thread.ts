/**
 * The one way kubelet-ts starts a long-lived worker thread (the prober, the
 * container-events watcher; the pool's threads are piscina's), by name. Its
 * entry is the thread's module as built in dist (.js). Run from source (tsx, vitest), the
 * thread starts on ts-worker-boot.cjs with `--import tsx`, which loads the
 * .ts entry: Node 20 does not give a thread started directly on a .ts file,
 * or on an eval'd import, the loader in time.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from './worker-limits.js';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The long-lived threads' entry modules, by name: callers name a thread, not a file of this folder. */
const ENTRIES = {
  prober: new URL('./prober/prober-thread-entry.js', import.meta.url),
  containerEvents: new URL('./container-events/events-worker.js', import.meta.url),
} as const;

export type ThreadName = keyof typeof ENTRIES;

export function startThread(name: ThreadName, workerData: object): Worker {
  return startThreadFrom(ENTRIES[name], workerData);
}

/** Starts a thread on any entry module (tests start their own). */
export function startThreadFrom(entry: URL, workerData: object): Worker {
  if (!FROM_SOURCE) return new Worker(entry, { workerData, resourceLimits: WORKER_RESOURCE_LIMITS });
  const source = fileURLToPath(entry).replace(/\.js$/, '.ts');
  return new Worker(new URL('./ts-worker-boot.cjs', import.meta.url), {
    workerData: { ...workerData, __entry: source },
    execArgv: ['--import', 'tsx'],
    resourceLimits: WORKER_RESOURCE_LIMITS,
  });
}
