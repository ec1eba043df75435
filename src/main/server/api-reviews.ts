/**
 * TokenReview and SubjectAccessReview against the apiserver, with the node's
 * own credentials (the system:node role may create both).
 */
import type { RestClient } from '../apiserver/rest-client.js';
import type { TokenReviewer, TokenReviewResult, UserInfo } from './authenticator.js';
import type { AccessReviewer, Decision } from './authorizer.js';
import type { NodeRequestAttributes } from './request-attributes.js';

interface TokenReviewStatus {
  status?: {
    authenticated?: boolean;
    error?: string;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}

interface AccessReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export function apiTokenReviewer(client: Pick<RestClient, 'json'>): TokenReviewer {
  return {
    async review(token: string): Promise<TokenReviewResult> {
      const r = await client.json<TokenReviewStatus>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const s = r.status ?? {};
      if (!s.authenticated || !s.user?.username) return { authenticated: false, ...(s.error && { error: s.error }) };
      return {
        authenticated: true,
        user: {
          name: s.user.username,
          groups: s.user.groups ?? [],
          ...(s.user.uid && { uid: s.user.uid }),
          ...(s.user.extra && { extra: s.user.extra }),
        },
      };
    },
  };
}

export function apiAccessReviewer(client: Pick<RestClient, 'json'>): AccessReviewer {
  return {
    async review(user: UserInfo, a: NodeRequestAttributes): Promise<Decision> {
      const r = await client.json<AccessReviewStatus>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            resourceAttributes: {
              namespace: a.namespace,
              verb: a.verb,
              group: a.group,
              version: a.version,
              resource: a.resource,
              subresource: a.subresource,
              name: a.name,
            },
            user: user.name,
            groups: user.groups,
            ...(user.uid && { uid: user.uid }),
            ...(user.extra && { extra: user.extra }),
          },
        },
      });
      const s = r.status ?? {};
      return { allowed: s.allowed === true && s.denied !== true, reason: s.reason ?? s.evaluationError ?? '' };
    },
  };
}
