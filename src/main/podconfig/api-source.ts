/**
 * The apiserver pod source (upstream config/apiserver.go: a reflector over
 * pods with fieldSelector spec.nodeName=<node>, feeding an UndeltaStore that
 * sends the complete list as a SET on every change).
 *
 * Contract:
 * - Starts when `ready()` resolves (the node is registered), then runs a
 *   Reflector (apiserver/reflector.ts: LIST, WATCH with bookmarks, relist on
 *   410, backoff 800 ms → 30 s) and sends a SET after each LIST. Running pods
 *   are untouched while it retries: the last SET stays in force.
 * - Watch events are folded into the store and one SET is sent per network
 *   chunk of events (not per event), so a burst of 1000 changes costs a
 *   handful of merges, not 1000.
 * - A SET copies only the pods whose object changed since the last SET (the
 *   reflector replaces a pod's object on every event). A pod that did not
 *   change is sent as the same copy as before: PodStorage keeps that copy
 *   or folds it into the one it keeps, so merging it again is a no-op it
 *   tells by identity. Without this every watch event of one pod cloned all
 *   N pods: 100 pods starting through a Deployment cost about 4 CPU-seconds
 *   of clones and their garbage on the main thread.
 */
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { Reflector } from '../apiserver/reflector.js';
import type { RestClient } from '../apiserver/rest-client.js';
import { API_SOURCE, type PodSource, type SourceChannel } from './types.js';

export interface ApiSourceOptions {
  client: RestClient;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  /** Resolves when the source may start (upstream waits for the node to be synced/registered). */
  ready: () => Promise<void>;
  random?: () => number;
}

export class ApiSource implements PodSource {
  readonly name = API_SOURCE;

  constructor(private readonly options: Readonly<ApiSourceOptions>) {}

  start(signal: AbortSignal, out: SourceChannel): void {
    // run() retries and logs its own failures; a rejection here is a bug, logged.
    this.run(signal, out).catch((err: unknown) => this.options.logger.error({ err }, 'Apiserver pod source stopped'));
  }

  private async run(signal: AbortSignal, out: SourceChannel): Promise<void> {
    try {
      await this.options.ready();
    } catch {
      return;
    }
    const fieldSelector = `spec.nodeName=${this.options.nodeName}`;
    const copies = new SentCopies();
    this.options.logger.info({ fieldSelector }, 'Watching apiserver');
    await new Reflector<Pod>({
      client: this.options.client,
      path: '/api/v1/pods',
      fieldSelector,
      clock: this.options.clock,
      logger: this.options.logger,
      what: 'Watching apiserver pods',
      random: this.options.random,
      onSync: (store) => out({ op: 'SET', pods: copies.of(store) }),
    }).run(signal);
  }
}

/** The copy last sent of each pod, with the reflector's object it was made from. */
class SentCopies {
  private sent = new Map<string, { from: Pod; copy: Pod }>();

  /** A copy of every pod of `store`, made anew only for a pod whose object is not the one of the last call. */
  of(store: ReadonlyMap<string, Pod>): Pod[] {
    const next = new Map<string, { from: Pod; copy: Pod }>();
    const pods: Pod[] = [];
    for (const [uid, from] of store) {
      let entry = this.sent.get(uid);
      if (entry?.from !== from) entry = { from, copy: structuredClone(from) };
      next.set(uid, entry);
      pods.push(entry.copy);
    }
    this.sent = next;
    return pods;
  }
}
