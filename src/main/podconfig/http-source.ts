/**
 * The staticPodURL source (upstream config/http.go).
 *
 * Contract:
 *  - GETs `url` with `headers` at start and then every `checkFrequencyMs`
 *    (default 20 s, injected clock); each request is aborted after
 *    `timeoutMs` (default 10 s, as upstream's client timeout).
 *  - The body may be one Pod, a PodList or a `kind: List` of Pods (YAML or
 *    JSON). A valid body emits one SET; an invalid one emits nothing, so the
 *    previous pods stay (one bad item rejects the whole body, as upstream).
 *  - A body identical to the last one read is not parsed again and emits
 *    nothing; if it failed to decode, the same failure is reported again. An empty body emits an empty SET (marks the source seen) and is
 *    reported as a failure.
 *  - A body over MAX_MANIFEST_BYTES (10 MiB) is aborted mid-transfer and
 *    reported; nothing is emitted. Non-200 statuses are failures.
 *  - Failures are logged as upstream throttles them: the first three at
 *    warn, the fourth says verbosity is being dropped, later ones at debug;
 *    the next success logs once and resets the count.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { Counter, Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import { ManifestError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { decodePodsManifest, manifestErrorsCounter, MAX_MANIFEST_BYTES } from './manifest.js';
import { HTTP_SOURCE, type PodSource, type SourceChannel } from './types.js';
import { runPeriodically } from '../../common/periodic.js';

export const DEFAULT_HTTP_CHECK_FREQUENCY_MS = 20_000;
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
/** Failures logged at full level before verbosity drops (upstream: 3). */
export const FAILURE_LOGS_AT_FULL_LEVEL = 3;

export interface HttpSourceOptions {
  url: string;
  /** Sent with every request (upstream staticPodURLHeader). */
  headers?: Record<string, string | string[]>;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  checkFrequencyMs?: number;
  timeoutMs?: number;
  maxBodyBytes?: number;
}

export interface FetchedBody {
  status: number;
  statusText: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
}

/**
 * GETs `url` and reads at most `maxBytes` of body. Rejects on network errors,
 * on abort of `signal`, and with a ManifestError (after aborting the
 * request) once the body exceeds `maxBytes`.
 */
export function fetchLimited(
  url: string,
  headers: Record<string, string | string[]>,
  maxBytes: number,
  signal: AbortSignal,
): Promise<FetchedBody> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { method: 'GET', headers, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          req.destroy();
          reject(new ManifestError(`${url}: response body exceeds the ${maxBytes}-byte limit; serve a smaller pod list`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', body: Buffer.concat(chunks), headers: res.headers }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export class HttpSource implements PodSource {
  readonly name = HTTP_SOURCE;
  private readonly log: Logger;
  private readonly errors: Counter<'source'>;
  private readonly period: number;
  private readonly timeout: number;
  private readonly maxBytes: number;
  private out: SourceChannel | undefined;
  private signal: AbortSignal | undefined;
  /** Last body read; an identical body short-circuits (re-raising its decode error, if any). */
  private lastBody: Buffer | undefined;
  private lastBodyError: Error | undefined;
  /** Last manifest error counted; the counter moves once per distinct error. */
  private lastCounted: string | undefined;
  private failureLogs = 0;

  constructor(private readonly opts: HttpSourceOptions) {
    this.log = opts.logger.child({ source: HTTP_SOURCE, url: opts.url });
    this.errors = manifestErrorsCounter(opts.registry);
    this.period = opts.checkFrequencyMs ?? DEFAULT_HTTP_CHECK_FREQUENCY_MS;
    this.timeout = opts.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
    this.maxBytes = opts.maxBodyBytes ?? MAX_MANIFEST_BYTES;
  }

  start(signal: AbortSignal, out: SourceChannel): void {
    if (this.out) throw new Error('HttpSource.start called twice');
    this.out = out;
    this.signal = signal;
    if (signal.aborted) return;
    this.log.info({ checkFrequencyMs: this.period }, 'Watching static pod URL');
    // run() logs its own failures; a rejection here is a bug, logged, and polling goes on.
    const onError = (err: unknown) => this.log.error({ err }, 'HTTP source check failed unexpectedly');
    runPeriodically(() => this.run(), { periodMs: this.period, immediate: true, signal, clock: this.opts.clock, onError }).catch(onError);
  }

  /** Number of consecutive failures (upstream failureLogs). */
  get consecutiveFailures(): number {
    return this.failureLogs;
  }

  /** One check with upstream's failure-log throttling. */
  private async run(): Promise<void> {
    let err: unknown;
    try {
      await this.extractFromURL();
    } catch (e) {
      err = e;
    }
    if (this.signal?.aborted) return;
    if (err === undefined) {
      if (this.failureLogs > 0) {
        this.log.info('Successfully read pods from URL');
        this.failureLogs = 0;
      }
      return;
    }
    const e = err instanceof Error ? { message: err.message, code: (err as { code?: string }).code } : err;
    if (this.failureLogs < FAILURE_LOGS_AT_FULL_LEVEL) this.log.warn({ err: e }, 'Failed to read pods from URL');
    else if (this.failureLogs === FAILURE_LOGS_AT_FULL_LEVEL)
      this.log.warn({ err: e }, 'Failed to read pods from URL. Dropping verbosity of this message to debug');
    else this.log.debug({ err: e }, 'Failed to read pods from URL');
    this.failureLogs++;
  }

  private async extractFromURL(): Promise<void> {
    const url = this.opts.url;
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    const cancelTimeout = this.opts.clock.setTimer(this.timeout, () =>
      ctl.abort(new Error(`${url}: no response within ${this.timeout} ms`)),
    );
    let res: FetchedBody;
    try {
      res = await fetchLimited(url, this.opts.headers ?? {}, this.maxBytes, ctl.signal);
    } catch (err) {
      if (err instanceof ManifestError) this.countManifestError(err.message);
      throw ctl.signal.aborted && ctl.signal.reason instanceof Error ? ctl.signal.reason : err;
    } finally {
      cancelTimeout();
      this.signal?.removeEventListener('abort', onAbort);
    }
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.statusText}`);
    if (res.body.length === 0) {
      // Forget the last body so the same pods are re-sent when it comes back.
      this.lastBody = undefined;
      this.emit({ op: 'SET', pods: [] });
      throw new Error(`zero-length data received from ${url}`);
    }
    if (this.lastBody?.equals(res.body)) {
      if (this.lastBodyError) throw this.lastBodyError;
      return;
    }
    this.lastBody = res.body;
    this.lastBodyError = undefined;
    let pods;
    try {
      pods = decodePodsManifest(res.body.toString('utf8'), {
        manifestSource: url,
        isFile: false,
        sourceName: HTTP_SOURCE,
        nodeName: this.opts.nodeName,
        clock: this.opts.clock,
        // Decoded only when the body changes: each unknown field is warned about once per change.
        onUnknownField: (f) => this.log.warn({ field: f.path, hint: f.hint || undefined }, 'Unknown field in static pod manifest, ignored'),
      });
    } catch (err) {
      this.lastBodyError = err as Error;
      this.countManifestError(errorMessage(err));
      throw err;
    }
    this.lastCounted = undefined;
    this.emit({ op: 'SET', pods });
  }

  private countManifestError(message: string): void {
    if (message === this.lastCounted) return;
    this.lastCounted = message;
    this.errors.inc({ source: HTTP_SOURCE });
  }

  private emit(update: Parameters<SourceChannel>[0]): void {
    if (!this.signal?.aborted) this.out?.(update);
  }
}
