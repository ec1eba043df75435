import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/common/errors.js';
import { resolveConfig } from '../../src/main/config/load-config.js';
import { unsupportedSettings } from '../../src/main/unsupported.js';

const FILE = '/etc/kts/config.yaml';
const HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const resolve = (argv: string[], body?: string) =>
  resolveConfig(body === undefined ? argv : ['--config', FILE, ...argv], {
    availableParallelism: 2,
    hostname: 'n',
    readFile: () => HEADER + (body ?? ''),
  });
const pick = (c: ReturnType<typeof resolve>['config']) => ({
  tls: [c.tlsCertFile, c.tlsPrivateKeyFile],
  authentication: c.authentication,
  authorization: c.authorization,
});

describe('server settings: defaults', () => {
  it('without --config: the legacy flag defaults (anonymous, no webhook, AlwaysAllow)', () => {
    expect(pick(resolve([]).config)).toEqual({
      tls: ['', ''],
      authentication: { x509: { clientCAFile: '' }, webhook: { enabled: false, cacheTTL: 120_000 }, anonymous: { enabled: true } },
      authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 } },
    });
  });
  it('with --config: the v1beta1 defaults (no anonymous, token webhook, Webhook authorization)', () => {
    expect(pick(resolve([], '').config)).toEqual({
      tls: ['', ''],
      authentication: { x509: { clientCAFile: '' }, webhook: { enabled: true, cacheTTL: 120_000 }, anonymous: { enabled: false } },
      authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 } },
    });
  });
});

describe('server settings: file and flags', () => {
  it('nested file fields merge over the defaults; a zero duration keeps the default', () => {
    const { config, sources } = resolve(
      [],
      [
        'tlsCertFile: /pki/k.crt',
        'tlsPrivateKeyFile: /pki/k.key',
        'authentication:',
        '  x509: {clientCAFile: /pki/ca.crt}',
        '  webhook: {cacheTTL: 0s}',
        'authorization:',
        '  webhook: {cacheUnauthorizedTTL: 1m}',
      ].join('\n'),
    );
    expect(pick(config)).toEqual({
      tls: ['/pki/k.crt', '/pki/k.key'],
      authentication: {
        x509: { clientCAFile: '/pki/ca.crt' },
        webhook: { enabled: true, cacheTTL: 120_000 },
        anonymous: { enabled: false },
      },
      authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 60_000 } },
    });
    expect(sources['authentication.x509.clientCAFile']).toBe('file');
    expect(sources['authentication.webhook.cacheTTL']).toBe('default');
    expect(sources['authorization.webhook.cacheUnauthorizedTTL']).toBe('file');
  });

  it('flags win over the file', () => {
    const { config, sources } = resolve(
      [
        '--tls-cert-file=/a.crt',
        '--tls-private-key-file=/a.key',
        '--client-ca-file=/ca.crt',
        '--anonymous-auth',
        '--authentication-token-webhook=false',
        '--authentication-token-webhook-cache-ttl=10s',
        '--authorization-mode=AlwaysAllow',
        '--authorization-webhook-cache-authorized-ttl=1s',
        '--authorization-webhook-cache-unauthorized-ttl=2s',
      ],
      'authentication: {anonymous: {enabled: false}}\n',
    );
    expect(pick(config)).toEqual({
      tls: ['/a.crt', '/a.key'],
      authentication: { x509: { clientCAFile: '/ca.crt' }, webhook: { enabled: false, cacheTTL: 10_000 }, anonymous: { enabled: true } },
      authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: 1000, cacheUnauthorizedTTL: 2000 } },
    });
    expect(sources['authentication.anonymous.enabled']).toBe('flag');
  });

  it('unknown nested fields and bad values are errors naming where', () => {
    expect(() => resolve([], 'authentication: {oidc: {}}\n')).toThrow(/authentication\.oidc: unknown field/);
    expect(() => resolve([], 'authorization: {mode: RBAC}\n')).toThrow(/authorization\.mode/);
    expect(() => resolve(['--authorization-mode=RBAC'])).toThrow(ConfigError);
    expect(() => resolve(['--tls-cert-file=/a.crt'])).toThrow(/tlsPrivateKeyFile: tlsCertFile and tlsPrivateKeyFile must be set together/);
  });

  it('the webhooks need --kubeconfig: a standalone start with the --config defaults is refused, as upstream', () => {
    expect(unsupportedSettings(resolve([], '').config)).toEqual([
      expect.stringMatching(/^no client provided, cannot use webhook authentication/),
      expect.stringMatching(/^no client provided, cannot use webhook authorization/),
    ]);
    expect(unsupportedSettings(resolve(['--kubeconfig=/k'], '').config)).toEqual([]);
    expect(unsupportedSettings(resolve([]).config)).toEqual([]);
  });
});
