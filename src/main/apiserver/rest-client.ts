/**
 * A small JSON REST client for the Kubernetes apiserver. Credentials, CA and
 * server come from a kubeconfig loaded by @kubernetes/client-node's KubeConfig
 * (client certificates, bearer tokens, exec/auth providers); requests go over
 * node:https with a keep-alive agent. Objects stay in their JSON wire form (the
 * project's model, src/api/): no class instances, timestamps are RFC3339 strings.
 *
 * Contract:
 * - Every request first takes a token from the client's rate limiter (upstream
 *   kubeAPIQPS/kubeAPIBurst), then runs with a deadline (options.timeoutMs).
 * - A non-2xx answer is an ApiStatusError carrying the HTTP code and the Status
 *   reason; a network failure, a deadline or an oversized body is an
 *   ApiUnreachableError. Callers retry; nothing here retries by itself.
 * - Each finished request is reported to `metrics` (rest_client_* metrics).
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError, ApiUnreachableError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { TokenBucket } from '../../common/token-bucket.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type PatchType = 'strategic' | 'merge' | 'json';

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** Receives one observation per finished request (success or failure). */
export interface RestClientObserver {
  /** code: the HTTP status, or '<error>' when no response arrived (client-go's label). */
  request(method: HttpMethod, host: string, code: string, seconds: number): void;
}

export interface RestClientOptions {
  kubeConfig: KubeConfig;
  clock: Clock;
  limiter: TokenBucket;
  /** Deadline per request, ms. */
  timeoutMs: number;
  userAgent: string;
  observer?: RestClientObserver;
  /** Responses larger than this fail with ApiUnreachableError. Default 256 MiB. */
  maxResponseBytes?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface Response {
  status: number;
  body: Buffer;
}

export class RestClient {
  readonly server: URL;
  readonly host: string;
  private agent: http.Agent | undefined;

  constructor(private readonly options: Readonly<RestClientOptions>) {
    const cluster = options.kubeConfig.getCurrentCluster();
    if (!cluster?.server) throw new ApiUnreachableError('the kubeconfig has no current cluster with a server URL');
    this.server = new URL(cluster.server);
    this.host = this.server.host;
  }

  get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.json<T>('GET', path, opts);
  }

  create<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.json<T>('POST', path, { ...opts, body });
  }

  replace<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.json<T>('PUT', path, { ...opts, body });
  }

  patch<T>(path: string, body: unknown, type: PatchType, opts: RequestOptions = {}): Promise<T> {
    return this.json<T>('PATCH', path, { ...opts, body, contentType: PATCH_CONTENT_TYPE[type] });
  }

  delete<T>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.json<T>('DELETE', path, { ...opts, body });
  }

  /**
   * A watch: GET `path` with watch=1 and `query`, calling `onEvent` for every
   * event line as it arrives (a batch of events from one network chunk ends with
   * `onChunkEnd`). Resolves when the server ends the stream (e.g. its
   * timeoutSeconds passed); rejects with ApiStatusError for a non-200 answer and
   * ApiUnreachableError for a broken connection or when `signal` aborts. The
   * deadline is the server-side timeout plus a margin.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; onChunkEnd?: () => void } = {},
  ): Promise<void> {
    await this.options.limiter.take(opts.signal);
    const started = this.options.clock.now();
    let code = '<error>';
    try {
      const res = await this.open('GET', path, { query: { ...query, watch: 1 }, signal: opts.signal });
      code = String(res.statusCode ?? 0);
      if (res.statusCode !== 200) {
        const body = await readAll(res, 1024 * 1024);
        throw statusError('WATCH', path, res.statusCode ?? 0, body);
      }
      await new Promise<void>((resolve, reject) => {
        let pending = '';
        let consumerError: Error | undefined;
        const timeoutSeconds = Number(query.timeoutSeconds ?? 0);
        const cancel = this.options.clock.setTimer((timeoutSeconds > 0 ? timeoutSeconds + 30 : 3600) * 1000, () =>
          res.destroy(new ApiUnreachableError(`WATCH ${path}: the stream outlived its timeout`)),
        );
        const onAbort = () => res.destroy(new ApiUnreachableError(`WATCH ${path}: aborted`));
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        const done = (err?: Error) => {
          cancel();
          opts.signal?.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve();
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          if (pending.length > (this.options.maxResponseBytes ?? 256 * 1024 * 1024)) {
            res.destroy(new ApiUnreachableError(`WATCH ${path}: an event larger than the response limit`));
            return;
          }
          let nl: number;
          let any = false;
          while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl).trim();
            pending = pending.slice(nl + 1);
            if (line === '') continue;
            let event: WatchEvent;
            try {
              event = JSON.parse(line) as WatchEvent;
            } catch (err) {
              res.destroy(new ApiUnreachableError(`WATCH ${path}: undecodable event: ${errorMessage(err)}`));
              return;
            }
            try {
              onEvent(event);
            } catch (err) {
              // The consumer ends the watch (e.g. a 410 ERROR event): its error is the watch's result.
              consumerError = err as Error;
              res.destroy();
              return;
            }
            any = true;
          }
          if (any) opts.onChunkEnd?.();
        });
        res.on('end', () => done());
        res.on('error', (err) =>
          done(
            consumerError ??
              (err instanceof ApiUnreachableError ? err : new ApiUnreachableError(`WATCH ${path}: ${err.message}`, { cause: err })),
          ),
        );
        res.on('close', () =>
          done(consumerError ?? (res.complete ? undefined : new ApiUnreachableError(`WATCH ${path}: connection closed`))),
        );
      });
    } finally {
      this.options.observer?.request('GET', this.host, code, (this.options.clock.now() - started) / 1000);
    }
  }

  /** Closes idle keep-alive connections (upstream closes them after repeated heartbeat failures). */
  closeIdleConnections(): void {
    const agent = this.agent;
    this.agent = undefined;
    agent?.destroy();
  }

  async json<T>(method: HttpMethod, path: string, opts: RequestOptions): Promise<T> {
    await this.options.limiter.take(opts.signal);
    const started = this.options.clock.now();
    let code = '<error>';
    try {
      const res = await this.send(method, path, opts);
      code = String(res.status);
      const text = res.body.toString('utf8');
      if (res.status < 200 || res.status >= 300) throw statusError(method, path, res.status, text);
      return (text ? JSON.parse(text) : {}) as T;
    } finally {
      this.options.observer?.request(method, this.host, code, (this.options.clock.now() - started) / 1000);
    }
  }

  private async requestOptions(
    method: HttpMethod,
    path: string,
    opts: RequestOptions,
  ): Promise<{ url: URL; headers: Record<string, string>; payload: Buffer | undefined; agent: http.Agent; isHttps: boolean }> {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const reqOpts: https.RequestOptions = { method, headers: {} };
    await this.options.kubeConfig.applyToHTTPSOptions(reqOpts);
    const headers: Record<string, string> = {
      ...(reqOpts.headers as Record<string, string>),
      accept: 'application/json',
      'user-agent': this.options.userAgent,
    };
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const isHttps = url.protocol === 'https:';
    this.agent ??= isHttps
      ? new https.Agent({
          keepAlive: true,
          ca: reqOpts.ca,
          cert: reqOpts.cert,
          key: reqOpts.key,
          ...(reqOpts.rejectUnauthorized !== undefined ? { rejectUnauthorized: reqOpts.rejectUnauthorized } : {}),
          ...(reqOpts.servername ? { servername: reqOpts.servername } : {}),
        })
      : new http.Agent({ keepAlive: true });
    return { url, headers, payload, agent: this.agent, isHttps };
  }

  /** Sends the request and resolves with the response head (for streams); connection errors reject. */
  private async open(method: HttpMethod, path: string, opts: RequestOptions): Promise<http.IncomingMessage> {
    const { url, headers, payload, agent, isHttps } = await this.requestOptions(method, path, opts);
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = (isHttps ? https : http).request(url, { method, headers, agent }, resolve);
      req.on('error', (err) => reject(new ApiUnreachableError(`${method} ${url.pathname}: ${this.host}: ${err.message}`, { cause: err })));
      if (opts.signal?.aborted) req.destroy(new Error('aborted'));
      req.end(payload);
    });
  }

  private async send(method: HttpMethod, path: string, opts: RequestOptions): Promise<Response> {
    const { url, headers, payload, agent, isHttps } = await this.requestOptions(method, path, opts);
    const limit = this.options.maxResponseBytes ?? 256 * 1024 * 1024;
    const timeoutMs = opts.timeoutMs ?? this.options.timeoutMs;
    const where = `${method} ${url.pathname}`;
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        cancelTimer();
        opts.signal?.removeEventListener('abort', onAbort);
        req.destroy();
        reject(err);
      };
      const req = (isHttps ? https : http).request(url, { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limit) fail(new ApiUnreachableError(`${where}: response larger than ${limit} bytes; refusing it`));
          else chunks.push(c);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          cancelTimer();
          opts.signal?.removeEventListener('abort', onAbort);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => fail(new ApiUnreachableError(`${where}: ${err.message}`, { cause: err })));
      });
      const cancelTimer = this.options.clock.setTimer(timeoutMs, () =>
        fail(new ApiUnreachableError(`${where}: no answer from ${this.host} within ${timeoutMs} ms`)),
      );
      const onAbort = () => fail(new ApiUnreachableError(`${where}: aborted`));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => fail(new ApiUnreachableError(`${where}: ${this.host}: ${err.message}`, { cause: err })));
      req.end(payload);
    });
  }
}

/** Reads a response body up to `limit` bytes. */
function readAll(res: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      if (text.length < limit) text += c;
    });
    res.on('end', () => resolve(text));
    res.on('error', () => resolve(text));
  });
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
}

function statusError(method: string, path: string, status: number, text: string): ApiStatusError {
  let parsed: StatusBody = {};
  try {
    parsed = JSON.parse(text) as StatusBody;
  } catch {
    // Not a Status object (a proxy's error page, say): keep the start of the text.
  }
  const reason = parsed.kind === 'Status' ? (parsed.reason ?? '') : '';
  const detail = parsed.kind === 'Status' ? (parsed.message ?? '') : text.slice(0, 200);
  return new ApiStatusError(`${method} ${path}: ${status}${reason ? ` ${reason}` : ''}: ${detail}`, status, reason);
}

export const isNotFound = (err: unknown): boolean => err instanceof ApiStatusError && err.status === 404;
export const isConflict = (err: unknown): boolean => err instanceof ApiStatusError && err.status === 409 && err.reason !== 'AlreadyExists';
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof ApiStatusError && err.status === 409 && err.reason === 'AlreadyExists';
