/**
 * Request authentication for the kubelet server (upstream BuildAuthn:
 * union(x509, webhook token), failing on error, then anonymous).
 *
 * - x509: a client certificate verified against authentication.x509.clientCAFile
 *   during the TLS handshake (a certificate the CA did not sign never gets this
 *   far: the connection is closed, see kubelet-server.ts); user = its
 *   CommonName, groups = its Organizations.
 * - Bearer token: reviewed by the apiserver (TokenReview) when
 *   authentication.webhook.enabled; answers (authenticated or not) are cached
 *   for cacheTTL; errors are not cached.
 * - A presented credential that fails is a failure (401), even with
 *   anonymous enabled (upstream NewFailOnError). No credential at all:
 *   system:anonymous in system:unauthenticated when anonymous is enabled,
 *   else 401.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../../common/clock.js';
import { TtlCache } from './ttl-cache.js';
import { errorMessage } from '../../common/error-message.js';

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type AuthnResult = { ok: true; user: UserInfo; method: 'x509' | 'token' | 'anonymous' } | { ok: false; reason: string };

export interface TokenReviewResult {
  authenticated: boolean;
  user?: UserInfo;
  error?: string;
}

/** Upstream's TokenReview webhook (authentication.k8s.io/v1). Throws when the apiserver cannot answer. */
export interface TokenReviewer {
  review(token: string): Promise<TokenReviewResult>;
}

export interface AuthenticatorOptions {
  clock: Clock;
  anonymous: boolean;
  /** undefined: bearer tokens are not authenticated (the header is ignored, as upstream without the webhook). */
  tokens?: { reviewer: TokenReviewer; cacheTTLMs: number };
}

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export class RequestAuthenticator {
  private readonly cache: TtlCache<TokenReviewResult>;

  constructor(private readonly options: Readonly<AuthenticatorOptions>) {
    this.cache = new TtlCache(options.clock);
  }

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const socket = req.socket as Partial<TLSSocket>;
    if (socket.encrypted && socket.authorized && typeof socket.getPeerCertificate === 'function') {
      const cert = socket.getPeerCertificate();
      const cn = cert?.subject?.CN;
      if (cert && Object.keys(cert).length > 0 && cn) {
        return { ok: true, method: 'x509', user: { name: asList(cn)[0], groups: asList(cert.subject.O) } };
      }
    }
    const header = req.headers.authorization;
    if (this.options.tokens && header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) return { ok: false, reason: 'invalid bearer token' };
      const token = m[1];
      const key = createHash('sha256').update(token).digest('hex');
      let r = this.cache.get(key);
      if (!r) {
        try {
          r = await this.options.tokens.reviewer.review(token);
        } catch (err) {
          return { ok: false, reason: `token review failed: ${errorMessage(err)}` };
        }
        this.cache.set(key, r, this.options.tokens.cacheTTLMs);
      }
      if (!r.authenticated || !r.user) return { ok: false, reason: r.error || 'invalid bearer token' };
      return { ok: true, method: 'token', user: r.user };
    }
    if (this.options.anonymous) return { ok: true, method: 'anonymous', user: ANONYMOUS };
    return { ok: false, reason: 'no credentials' };
  }
}
