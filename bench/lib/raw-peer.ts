/**
 * The floor of the peer benchmark: the agents' spawn and churn made directly
 * over CRI with no agent, at a fixed concurrency. A pod is runRawPod's three
 * calls (RunPodSandbox, CreateContainer, StartContainer); stopping one is
 * StopContainer with the manifests' grace, then StopPodSandbox. The pods are
 * shaped and labelled like the agents' static pods (name `<gen>-<i>-<node>`,
 * the run's namespace, one container `c` of the same image and command, a log
 * directory per pod), so the bench counts them the same way.
 *
 * Like a PeerAgent, `stop()` ends the work (the calls in flight finish) and
 * `cleanup()` removes what the run left on disk; the pods themselves are
 * removed by namespace.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CriClient } from '../../src/cri/client.js';
import { runRawPod, type RawPod } from '../../src/sim/populate.js';

/** Runs `fn` over `items`, `limit` at a time in order; stops taking items once one fails or `signal` aborts. */
export async function mapLimit<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !failed) {
        signal?.throwIfAborted();
        try {
          await fn(items[next++]);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    }),
  );
}

export interface RawPeerOptions {
  namespace: string;
  nodeName: string;
  /** CRI calls in flight: this many pods are created or stopped at a time. */
  concurrency: number;
  command: string[];
  /** StopContainer's timeout (s): the manifests' terminationGracePeriodSeconds. */
  graceS: number;
}

export class RawPeer {
  readonly namespace: string;
  private readonly logRoot = mkdtempSync(join(tmpdir(), 'kts-peer-raw-logs-'));
  /** The pods made so far, by generation. */
  private readonly pods = new Map<string, RawPod[]>();
  private readonly abort = new AbortController();
  private active: Promise<void> | undefined;

  constructor(
    private readonly cri: CriClient,
    private readonly o: RawPeerOptions,
  ) {
    this.namespace = o.namespace;
  }

  /** Creates generation `gen`'s `n` pods; resolves when the last StartContainer has returned. */
  spawn(gen: string, n: number): Promise<void> {
    return this.queue(this.creates(gen, n));
  }

  /**
   * Stops every pod of generation `old` and creates generation `gen`'s `n`
   * pods through one queue, the stops first (as the agents see the deletions
   * first); resolves when the last call has returned.
   */
  churn(old: string, gen: string, n: number): Promise<void> {
    const stops = (this.pods.get(old) ?? []).map((p) => () => this.stopPod(p));
    return this.queue([...stops, ...this.creates(gen, n)]);
  }

  /** Takes no more work and waits for the calls in flight. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('raw run stopped'));
    await this.active?.catch(() => undefined);
  }

  /** Removes the pods' log directories (the pods are removed by namespace). */
  cleanup(): Promise<void> {
    rmSync(this.logRoot, { recursive: true, force: true });
    return Promise.resolve();
  }

  private queue(tasks: (() => Promise<void>)[]): Promise<void> {
    const run = mapLimit(tasks, this.o.concurrency, (task) => task(), this.abort.signal);
    this.active = run;
    return run;
  }

  private creates(gen: string, n: number): (() => Promise<void>)[] {
    const made = new Array<RawPod>(n);
    this.pods.set(gen, made);
    return Array.from({ length: n }, (_, i) => async () => {
      const name = `${gen}-${i}-${this.o.nodeName}`;
      const uid = `${this.namespace}-${gen}-${i}`;
      // The pod's log directory, as a kubelet makes it (<pod-logs-dir>/<namespace>_<name>_<uid>).
      const logDirectory = join(this.logRoot, `${this.namespace}_${name}_${uid}`);
      mkdirSync(logDirectory, { recursive: true });
      made[i] = await runRawPod(this.cri, {
        uid,
        name,
        namespace: this.namespace,
        logDirectory,
        containers: [{ name: 'c', command: this.o.command }],
      });
    });
  }

  private async stopPod(pod: RawPod | undefined): Promise<void> {
    if (!pod) return;
    const grace = this.o.graceS;
    for (const containerId of pod.containerIds) {
      await this.cri.stopContainer({ containerId, timeout: BigInt(grace) }, { timeoutMs: grace * 1000 + 120_000 });
    }
    await this.cri.stopPodSandbox({ podSandboxId: pod.sandboxId });
  }
}
