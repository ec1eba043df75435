/**
 * Test-only (the fault suite, KTS_TEST_FAULT_HOOKS=relist|syncPod|inspect;
 * see src/main/startup/fault-hooks.ts): a worker-thread crash aimed at one
 * task type. The main thread arms it in shared memory; the next task of that
 * type on a pool worker claims it (at most one per arming) and ends its own
 * thread while the task is in flight, taking the thread's other tasks with
 * it, as a crash would. Absent from WorkerInit unless the hook is on, and
 * never claimed on the main thread (inline mode has no thread to end).
 */
import { isMainThread } from 'node:worker_threads';

export const CRASH_TASK_TYPES = ['relist', 'syncPod', 'inspect'] as const;
export type CrashTaskType = (typeof CRASH_TASK_TYPES)[number];

/** One Int32 flag per type, then (8-aligned) one BigInt64 claim time per type. */
const TIMES_OFFSET = 8 * Math.ceil((4 * CRASH_TASK_TYPES.length) / 8);
const BYTES = TIMES_OFFSET + 8 * CRASH_TASK_TYPES.length;

export class CrashArm {
  private readonly flags: Int32Array;
  /** When the last arming of each type was claimed (epoch ms; 0 while armed or never). */
  private readonly times: BigInt64Array;

  private constructor(buffer: SharedArrayBuffer) {
    this.flags = new Int32Array(buffer, 0, CRASH_TASK_TYPES.length);
    this.times = new BigInt64Array(buffer, TIMES_OFFSET, CRASH_TASK_TYPES.length);
  }

  static create(): CrashArm {
    return new CrashArm(new SharedArrayBuffer(BYTES));
  }

  static attach(buffer: SharedArrayBuffer): CrashArm {
    return new CrashArm(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.flags.buffer as SharedArrayBuffer;
  }

  /** The next task of `type` that claims it ends its thread. */
  arm(type: CrashTaskType): void {
    const i = CRASH_TASK_TYPES.indexOf(type);
    Atomics.store(this.times, i, 0n);
    Atomics.store(this.flags, i, 1);
  }

  /** Whether the caller, a task of `type` on a worker thread, takes the armed crash; true for one caller per arming. */
  claim(type: CrashTaskType, mainThread = isMainThread, now = Date.now()): boolean {
    const i = CRASH_TASK_TYPES.indexOf(type);
    if (mainThread || Atomics.compareExchange(this.flags, i, 1, 0) !== 1) return false;
    Atomics.store(this.times, i, BigInt(Math.round(now)));
    return true;
  }

  /**
   * When a task claimed the last arming of `type` (epoch ms), for the hook to log the hit; undefined while
   * armed and unclaimed. (The time is written just after the flag is taken: a reader may see the flag
   * cleared a moment before the time, and then reads undefined until the next look.)
   */
  claimedAt(type: CrashTaskType): number | undefined {
    const i = CRASH_TASK_TYPES.indexOf(type);
    if (Atomics.load(this.flags, i) === 1) return undefined;
    return Number(Atomics.load(this.times, i)) || undefined;
  }
}

export interface ThreadEnd {
  /** Ends the thread (process.exit in a worker ends that thread only). */
  exit(code: number): void;
  random(): number;
}

const realEnd: ThreadEnd = { exit: (code) => process.exit(code), random: Math.random };

/**
 * Lets `task` run, then ends the thread after a random part of it (up to `maxMs`) or as it settles,
 * whichever is first: its result never leaves the thread. Resolves (after exit) only with a fake `end`.
 */
export async function endThreadDuring(task: Promise<unknown>, maxMs = 50, end: ThreadEnd = realEnd): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const delay = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.floor(end.random() * maxMs))));
  await Promise.race([task.then(noop, noop), delay]);
  clearTimeout(timer);
  end.exit(70);
}

function noop(): void {}

/**
 * A task of `type` that claims the armed crash ends its thread while in flight, and its result never comes
 * (the returned promise does not settle); otherwise returns the task.
 */
export function crashable<T>(arm: CrashArm | undefined, type: CrashTaskType, task: Promise<T>): Promise<T> {
  if (!arm?.claim(type)) return task;
  return endThreadDuring(task).then(() => new Promise<never>(noop));
}
