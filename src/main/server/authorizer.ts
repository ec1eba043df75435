/**
 * Request authorization for the kubelet server (upstream BuildAuthz):
 * AlwaysAllow, or Webhook: a SubjectAccessReview (authorization.k8s.io/v1)
 * for the request's node attributes, cached per user and attributes for
 * cacheAuthorizedTTL (allowed) or cacheUnauthorizedTTL (denied). An
 * apiserver error is an error (500), never a cached answer.
 */
import type { Clock } from '../../common/clock.js';
import type { UserInfo } from './authenticator.js';
import type { NodeRequestAttributes } from './request-attributes.js';
import { TtlCache } from './ttl-cache.js';

export interface Decision {
  allowed: boolean;
  reason: string;
}

export interface Authorizer {
  authorize(user: UserInfo, attrs: NodeRequestAttributes): Promise<Decision>;
}

export const alwaysAllow: Authorizer = { authorize: async () => ({ allowed: true, reason: '' }) };

/** Upstream's SubjectAccessReview webhook. Throws when the apiserver cannot answer. */
export interface AccessReviewer {
  review(user: UserInfo, attrs: NodeRequestAttributes): Promise<Decision>;
}

export interface WebhookAuthorizerOptions {
  reviewer: AccessReviewer;
  clock: Clock;
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
}

export class WebhookAuthorizer implements Authorizer {
  private readonly cache: TtlCache<Decision>;

  constructor(private readonly options: Readonly<WebhookAuthorizerOptions>) {
    this.cache = new TtlCache(options.clock);
  }

  async authorize(user: UserInfo, attrs: NodeRequestAttributes): Promise<Decision> {
    const key = JSON.stringify([
      user.name,
      user.uid ?? '',
      [...user.groups].sort(),
      user.extra ?? {},
      attrs.verb,
      attrs.subresource,
      attrs.name,
    ]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const d = await this.options.reviewer.review(user, attrs);
    this.cache.set(key, d, d.allowed ? this.options.authorizedTTLMs : this.options.unauthorizedTTLMs);
    return d;
  }
}
