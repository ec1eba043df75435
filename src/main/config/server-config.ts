/**
 * The kubelet server's settings: TLS serving files, authentication and
 * authorization (KubeletConfiguration tlsCertFile, tlsPrivateKeyFile,
 * authentication, authorization), their upstream defaults and flags.
 *
 * Defaults follow upstream: with a --config file, the v1beta1 defaults
 * (anonymous off, token webhook on with a 2m cache, authorization Webhook
 * with 5m/30s caches); without one, the legacy flag defaults
 * (applyLegacyDefaults: anonymous on, webhook off, AlwaysAllow). Nested file
 * objects merge over the defaults field by field.
 */
import * as z from 'zod';
import { durationString } from './duration-schema.js';
import type { FlagSpec } from './flags.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

export interface AuthenticationConfig {
  x509: { clientCAFile: string };
  webhook: { enabled: boolean; cacheTTL: number };
  anonymous: { enabled: boolean };
}

export interface AuthorizationConfig {
  mode: AuthorizationMode;
  webhook: { cacheAuthorizedTTL: number; cacheUnauthorizedTTL: number };
}

export interface ServerConfig {
  /** '' = generate a self-signed pair under the cert dir (kubelet.crt / kubelet.key). */
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  authentication: AuthenticationConfig;
  authorization: AuthorizationConfig;
}

/** The file fields (spread into the strict KubeletConfiguration schema). */
export const ServerConfigFileFields = {
  tlsCertFile: z.string().optional(),
  tlsPrivateKeyFile: z.string().optional(),
  authentication: z
    .strictObject({
      x509: z.strictObject({ clientCAFile: z.string().optional() }).optional(),
      webhook: z.strictObject({ enabled: z.boolean().optional(), cacheTTL: durationString.optional() }).optional(),
      anonymous: z.strictObject({ enabled: z.boolean().optional() }).optional(),
    })
    .optional(),
  authorization: z
    .strictObject({
      mode: z.enum(AUTHORIZATION_MODES).optional(),
      webhook: z
        .strictObject({ cacheAuthorizedTTL: durationString.optional(), cacheUnauthorizedTTL: durationString.optional() })
        .optional(),
    })
    .optional(),
};

type ServerFile = { [K in keyof typeof ServerConfigFileFields]?: z.output<(typeof ServerConfigFileFields)[K]> };

export function defaultServerConfig(withConfigFile: boolean): ServerConfig {
  return {
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    authentication: {
      x509: { clientCAFile: '' },
      webhook: { enabled: withConfigFile, cacheTTL: 120_000 },
      anonymous: { enabled: !withConfigFile },
    },
    authorization: {
      mode: withConfigFile ? 'Webhook' : 'AlwaysAllow',
      webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 },
    },
  };
}

/** Dotted paths of the nested settings, as flags and config sources name them. */
export const SERVER_NESTED_KEYS = [
  'authentication.x509.clientCAFile',
  'authentication.webhook.enabled',
  'authentication.webhook.cacheTTL',
  'authentication.anonymous.enabled',
  'authorization.mode',
  'authorization.webhook.cacheAuthorizedTTL',
  'authorization.webhook.cacheUnauthorizedTTL',
] as const;
export type ServerNestedKey = (typeof SERVER_NESTED_KEYS)[number];

/** Sets `a.b.c` on `target`. */
export function setPath(target: object, path: string, value: unknown): void {
  const parts = path.split('.');
  let o = target as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) o = o[p] as Record<string, unknown>;
  o[parts.at(-1)!] = value;
}

/**
 * Applies the file's server fields over `base` (upstream: a zero duration
 * keeps the default). Returns the dotted keys it set.
 */
export function applyServerFile(base: ServerConfig, file: ServerFile): string[] {
  const set: string[] = [];
  if (file.tlsCertFile !== undefined) {
    base.tlsCertFile = file.tlsCertFile;
    set.push('tlsCertFile');
  }
  if (file.tlsPrivateKeyFile !== undefined) {
    base.tlsPrivateKeyFile = file.tlsPrivateKeyFile;
    set.push('tlsPrivateKeyFile');
  }
  const values: [ServerNestedKey, unknown][] = [
    ['authentication.x509.clientCAFile', file.authentication?.x509?.clientCAFile],
    ['authentication.webhook.enabled', file.authentication?.webhook?.enabled],
    ['authentication.webhook.cacheTTL', file.authentication?.webhook?.cacheTTL || undefined],
    ['authentication.anonymous.enabled', file.authentication?.anonymous?.enabled],
    ['authorization.mode', file.authorization?.mode],
    ['authorization.webhook.cacheAuthorizedTTL', file.authorization?.webhook?.cacheAuthorizedTTL || undefined],
    ['authorization.webhook.cacheUnauthorizedTTL', file.authorization?.webhook?.cacheUnauthorizedTTL || undefined],
  ];
  for (const [key, value] of values) {
    if (value === undefined) continue;
    setPath(base, key, value);
    set.push(key);
  }
  return set;
}

const flag = (
  name: string,
  target: FlagSpec['target'],
  kind: FlagSpec['kind'],
  arg: string,
  defaultText: string,
  help: string,
  choices?: readonly string[],
): FlagSpec => ({ name, target, kind, arg, defaultText, help, ...(choices && { choices }) });

/** The server flags, in --help order (after --read-only-port). */
export const SERVER_FLAG_SPECS: readonly FlagSpec[] = [
  flag(
    'tls-cert-file',
    'tlsCertFile',
    'string',
    'path',
    '"" (self-signed under --cert-dir)',
    'x509 certificate for HTTPS (with intermediate certificates after it). Without it and --tls-private-key-file, a self-signed pair is generated in --cert-dir.',
  ),
  flag('tls-private-key-file', 'tlsPrivateKeyFile', 'string', 'path', '""', 'x509 private key matching --tls-cert-file.'),
  flag(
    'client-ca-file',
    'authentication.x509.clientCAFile',
    'string',
    'path',
    '""',
    'Clients presenting a certificate signed by one of these CAs are authenticated by its CommonName (user) and Organizations (groups); a certificate they did not sign fails the TLS connection.',
  ),
  flag(
    'anonymous-auth',
    'authentication.anonymous.enabled',
    'bool',
    'bool',
    'true without --config, false with it',
    'Serve unauthenticated requests as system:anonymous (group system:unauthenticated).',
  ),
  flag(
    'authentication-token-webhook',
    'authentication.webhook.enabled',
    'bool',
    'bool',
    'false without --config, true with it',
    'Authenticate bearer tokens with the TokenReview API (needs --kubeconfig).',
  ),
  flag(
    'authentication-token-webhook-cache-ttl',
    'authentication.webhook.cacheTTL',
    'duration',
    'duration',
    '2m0s',
    'How long to cache TokenReview answers.',
  ),
  flag(
    'authorization-mode',
    'authorization.mode',
    'enum',
    'mode',
    'AlwaysAllow without --config, Webhook with it',
    'Authorization of requests to the server: AlwaysAllow, or Webhook (SubjectAccessReview; needs --kubeconfig).',
    AUTHORIZATION_MODES,
  ),
  flag(
    'authorization-webhook-cache-authorized-ttl',
    'authorization.webhook.cacheAuthorizedTTL',
    'duration',
    'duration',
    '5m0s',
    "How long to cache 'authorized' SubjectAccessReview answers.",
  ),
  flag(
    'authorization-webhook-cache-unauthorized-ttl',
    'authorization.webhook.cacheUnauthorizedTTL',
    'duration',
    'duration',
    '30s',
    "How long to cache 'unauthorized' SubjectAccessReview answers.",
  ),
];

/**
 * Upstream BuildAuthn / BuildAuthz: the webhooks need an apiserver client. As
 * upstream, this fails the start (not the config resolution): a --config file
 * with the default authn/authz and no --kubeconfig does not start.
 */
export function webhookClientProblems(c: ServerConfig & { kubeconfig: string }): string[] {
  const out: string[] = [];
  if (c.authentication.webhook.enabled && !c.kubeconfig) {
    out.push(
      'no client provided, cannot use webhook authentication: set --kubeconfig, or disable it (authentication.webhook.enabled: false, --authentication-token-webhook=false) for a standalone kubelet',
    );
  }
  if (c.authorization.mode === 'Webhook' && !c.kubeconfig) {
    out.push(
      'no client provided, cannot use webhook authorization: set --kubeconfig, or use AlwaysAllow (authorization.mode, --authorization-mode=AlwaysAllow) for a standalone kubelet',
    );
  }
  return out;
}
