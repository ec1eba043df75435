/**
 * Service-account tokens from the TokenRequest API (upstream
 * pkg/kubelet/token/token_manager.go): POST
 * /api/v1/namespaces/NS/serviceaccounts/NAME/token, bound to the pod.
 *
 * Contract:
 *  - A token is cached by (service account, namespace, audiences,
 *    expirationSeconds, bound object) and requested again once 80 % of its
 *    life has passed or it is older than 24 h, minus up to 10 s of jitter.
 *    Projected volumes ask on every remount (each pod sync), so the file is
 *    renewed at the first sync past that point.
 *  - A refresh that fails keeps serving the cached token until it expires
 *    (logged); an expired one is an error.
 *  - Tokens of a pod are forgotten with its volumes; expired tokens are
 *    dropped every minute.
 */
import type { Logger } from 'pino';
import type { TokenRequest } from '../../api/core-v1.js';
import type { Clock } from '../../common/clock.js';
import type { RestClient } from '../apiserver/rest-client.js';
import type { TokenSource, TokenSpec } from './volume-plugin.js';
import { errorMessage } from '../../common/error-message.js';
import { runPeriodically } from '../../common/periodic.js';

export const MAX_TTL_MS = 24 * 3600 * 1000;
export const MAX_JITTER_MS = 10_000;
export const GC_PERIOD_MS = 60_000;

export interface TokenManagerOptions {
  client: Pick<RestClient, 'create'>;
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

export function tokenKey(serviceAccount: string, namespace: string, spec: TokenSpec): string {
  const r = spec.boundObjectRef;
  return JSON.stringify([serviceAccount, namespace, spec.audiences, spec.expirationSeconds, r.apiVersion, r.kind, r.name, r.uid]);
}

export class TokenManager implements TokenSource {
  private readonly cache = new Map<string, TokenRequest>();

  constructor(private readonly options: Readonly<TokenManagerOptions>) {}

  /** Drops expired tokens every minute until `signal` aborts. */
  start(signal: AbortSignal): void {
    runPeriodically(() => this.cleanup(), { periodMs: GC_PERIOD_MS, signal, clock: this.options.clock, onError: () => undefined }).catch(
      () => undefined,
    );
  }

  async getServiceAccountToken(namespace: string, serviceAccount: string, spec: TokenSpec): Promise<TokenRequest> {
    const key = tokenKey(serviceAccount, namespace, spec);
    const cached = this.cache.get(key);
    if (cached && !this.requiresRefresh(cached)) return cached;
    let fresh: TokenRequest;
    try {
      fresh = await this.options.client.create<TokenRequest>(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
      );
    } catch (err) {
      const msg = errorMessage(err);
      if (!cached) throw new Error(`failed to fetch token: ${msg}`, { cause: err });
      if (this.expired(cached)) throw new Error(`token ${key} expired and refresh failed: ${msg}`, { cause: err });
      this.options.logger.error(
        { serviceAccount: `${namespace}/${serviceAccount}`, pod: spec.boundObjectRef.name, err: msg },
        "Couldn't update token",
      );
      return cached;
    }
    this.cache.set(key, fresh);
    return fresh;
  }

  deletePodTokens(podUid: string): void {
    for (const [k, tr] of this.cache) if (tr.spec?.boundObjectRef?.uid === podUid) this.cache.delete(k);
  }

  /** Tokens held (tests). */
  size(): number {
    return this.cache.size;
  }

  cleanup(): void {
    for (const [k, tr] of this.cache) if (this.expired(tr)) this.cache.delete(k);
  }

  private expiry(tr: TokenRequest): number {
    return Date.parse(tr.status?.expirationTimestamp ?? '') || 0;
  }

  private expired(tr: TokenRequest): boolean {
    return this.options.clock.now() > this.expiry(tr);
  }

  /** Upstream requiresRefresh: past 80 % of the requested life, or older than 24 h, minus jitter. */
  requiresRefresh(tr: TokenRequest): boolean {
    const seconds = tr.spec?.expirationSeconds;
    if (!seconds) {
      this.options.logger.error({ pod: tr.spec?.boundObjectRef?.name }, 'expiration seconds was nil for the token request');
      return false;
    }
    const now = this.options.clock.now();
    const exp = this.expiry(tr);
    const issuedAt = exp - seconds * 1000;
    const jitter = Math.floor((this.options.random ?? Math.random)() * (MAX_JITTER_MS / 1000)) * 1000;
    if (now > issuedAt + MAX_TTL_MS - jitter) return true;
    return now > exp - Math.floor((seconds * 20) / 100) * 1000 - jitter;
  }
}
