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
    this.options.logger.info({ fieldSelector }, 'Watching apiserver');
    await new Reflector<Pod>({
      client: this.options.client,
      path: '/api/v1/pods',
      fieldSelector,
      clock: this.options.clock,
      logger: this.options.logger,
      what: 'Watching apiserver pods',
      random: this.options.random,
      onSync: (store) => out({ op: 'SET', pods: [...store.values()].map((p) => structuredClone(p)) }),
    }).run(signal);
  }
}
