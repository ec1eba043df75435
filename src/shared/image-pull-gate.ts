/**
 * Node-wide image pull limits shared by every worker thread (upstream
 * images.NewImageManager: serialImagePuller or parallelImagePuller with
 * maxParallelImagePulls, wrapped in throttledPuller with registryPullQPS and
 * registryBurst). Pulls run in worker tasks on several threads, so the
 * limits live in one SharedArrayBuffer:
 *  - a counting semaphore: at most `limit` pulls at once (1 when pulls are
 *    serialized, maxParallelImagePulls otherwise, 0 = no limit); waiters
 *    sleep with Atomics.waitAsync and are woken by every release;
 *  - a token bucket (golang.org/x/time/rate as TryAccept uses it): `burst`
 *    tokens, refilled at `qps` per second; a pull that finds no token fails
 *    at once with "pull QPS exceeded." (qps 0 = no throttling).
 *
 * Layout (Int32 words): magic, version, lock, inFlight, limit, wakeSeq, then
 * Float64 at byte 32: qps, burst, tokens, lastRefillMs. A tiny spinlock
 * (lock word, compareExchange) guards the bucket; every other field is
 * touched with Atomics only. Waiters are woken together, so the order in
 * which queued pulls start is not FIFO (upstream's serial puller is).
 */
const MAGIC = 0x1a6e9a7e;
const VERSION = 1;
const W_MAGIC = 0;
const W_VERSION = 1;
const W_LOCK = 2;
const W_IN_FLIGHT = 3;
const W_LIMIT = 4;
const W_WAKE = 5;
const F_QPS = 4; // Float64 index (byte 32)
const F_BURST = 5;
const F_TOKENS = 6;
const F_LAST = 7;
export const IMAGE_PULL_GATE_BYTES = 64;

/** Atomics.waitAsync (Node 16+; typed here because the project's lib is ES2023). */
type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const atomicsWaitAsync = Atomics as unknown as { waitAsync(ta: Int32Array, index: number, value: number): WaitAsyncResult };
const waitAsync = (ta: Int32Array, index: number, value: number) => atomicsWaitAsync.waitAsync(ta, index, value);

export interface ImagePullLimits {
  /** Concurrent pulls allowed; 0 = unlimited. */
  limit: number;
  /** Pulls per second; 0 = no throttling. */
  qps: number;
  burst: number;
}

/** The upstream kubelet's choice of limits from its configuration. */
export function imagePullLimits(c: {
  serializeImagePulls: boolean;
  maxParallelImagePulls: number | null;
  registryPullQPS: number;
  registryBurst: number;
}): ImagePullLimits {
  const limit = c.serializeImagePulls ? 1 : (c.maxParallelImagePulls ?? 0);
  return { limit, qps: c.registryPullQPS, burst: c.registryBurst };
}

export class ImagePullQPSExceededError extends Error {
  constructor() {
    super('pull QPS exceeded.');
  }
}

export class ImagePullGate {
  private constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly i32: Int32Array,
    private readonly f64: Float64Array,
  ) {}

  static create(limits: ImagePullLimits, nowMs: number): ImagePullGate {
    const sab = new SharedArrayBuffer(IMAGE_PULL_GATE_BYTES);
    const g = new ImagePullGate(sab, new Int32Array(sab), new Float64Array(sab));
    Atomics.store(g.i32, W_MAGIC, MAGIC);
    Atomics.store(g.i32, W_VERSION, VERSION);
    Atomics.store(g.i32, W_LIMIT, Math.max(0, Math.floor(limits.limit)));
    g.f64[F_QPS] = limits.qps;
    g.f64[F_BURST] = limits.burst;
    g.f64[F_TOKENS] = limits.burst;
    g.f64[F_LAST] = nowMs;
    return g;
  }

  static attach(sab: SharedArrayBuffer): ImagePullGate {
    const i32 = new Int32Array(sab);
    if (Atomics.load(i32, W_MAGIC) !== MAGIC || Atomics.load(i32, W_VERSION) !== VERSION) {
      throw new Error('buffer is not an image pull gate (bad magic or version)');
    }
    return new ImagePullGate(sab, i32, new Float64Array(sab));
  }

  /** Pulls running now (for tests and diagnostics). */
  inFlight(): number {
    return Atomics.load(this.i32, W_IN_FLIGHT);
  }

  /** Waits for a pull slot; resolves to its release function. */
  async acquire(): Promise<() => void> {
    for (;;) {
      const limit = Atomics.load(this.i32, W_LIMIT);
      const seen = Atomics.load(this.i32, W_WAKE);
      const cur = Atomics.load(this.i32, W_IN_FLIGHT);
      if (limit === 0 || cur < limit) {
        if (Atomics.compareExchange(this.i32, W_IN_FLIGHT, cur, cur + 1) === cur) return this.releaser();
        continue;
      }
      const w = waitAsync(this.i32, W_WAKE, seen);
      if (w.async) await w.value;
    }
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      Atomics.sub(this.i32, W_IN_FLIGHT, 1);
      Atomics.add(this.i32, W_WAKE, 1);
      Atomics.notify(this.i32, W_WAKE);
    };
  }

  /** Token bucket TryAccept at `nowMs`: true (and a token taken) when a pull may go to the registry now. */
  tryAccept(nowMs: number): boolean {
    if (this.f64[F_QPS] <= 0) return true;
    while (Atomics.compareExchange(this.i32, W_LOCK, 0, 1) !== 0) {
      // spin: the critical section is a few arithmetic operations
    }
    try {
      const qps = this.f64[F_QPS];
      const burst = this.f64[F_BURST];
      const elapsed = Math.max(0, nowMs - this.f64[F_LAST]);
      const tokens = Math.min(burst, this.f64[F_TOKENS] + (elapsed / 1000) * qps);
      this.f64[F_LAST] = Math.max(this.f64[F_LAST], nowMs);
      if (tokens >= 1) {
        this.f64[F_TOKENS] = tokens - 1;
        return true;
      }
      this.f64[F_TOKENS] = tokens;
      return false;
    } finally {
      Atomics.store(this.i32, W_LOCK, 0);
    }
  }
}
