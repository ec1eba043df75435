import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import { TokenManager } from '../../src/main/volumes/token-manager.js';
import type { TokenSpec } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';

const spec = (uid = 'pod-uid', expirationSeconds = 3600): TokenSpec => ({
  audiences: [],
  expirationSeconds,
  boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid },
});

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const requests: { path: string; body: { spec: TokenSpec } }[] = [];
  let fail: Error | undefined;
  let n = 0;
  const client = {
    create: async <T>(path: string, body: unknown): Promise<T> => {
      if (fail) throw fail;
      const b = body as { spec: TokenSpec };
      requests.push({ path, body: b });
      return {
        spec: b.spec,
        status: { token: `token-${++n}`, expirationTimestamp: new Date(clock.now() + b.spec.expirationSeconds * 1000).toISOString() },
      } as T;
    },
  };
  const tm = new TokenManager({ client, clock, logger: silentLogger(), random: () => 0 });
  return { clock, requests, tm, failWith: (e: Error | undefined) => (fail = e) };
}

describe('TokenManager (upstream token.Manager)', () => {
  it('requests a bound token, then serves it from the cache until 80 % of its life', async () => {
    const { clock, requests, tm } = setup();
    expect((await tm.getServiceAccountToken('ns', 'default', spec())).status?.token).toBe('token-1');
    expect(requests[0]).toMatchObject({
      path: '/api/v1/namespaces/ns/serviceaccounts/default/token',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: spec() },
    });
    clock.step(2880_000); // exactly 80 %
    expect((await tm.getServiceAccountToken('ns', 'default', spec())).status?.token).toBe('token-1');
    clock.step(1_000);
    expect((await tm.getServiceAccountToken('ns', 'default', spec())).status?.token).toBe('token-2');
  });

  it('a long-lived token is renewed after 24 h', async () => {
    const { clock, tm } = setup();
    await tm.getServiceAccountToken('ns', 'sa', spec('u', 7 * 24 * 3600));
    clock.step(24 * 3600 * 1000 + 1);
    expect((await tm.getServiceAccountToken('ns', 'sa', spec('u', 7 * 24 * 3600))).status?.token).toBe('token-2');
  });

  it('keeps a valid token when a refresh fails; an expired one is an error; no token at all is an error', async () => {
    const { clock, tm, failWith } = setup();
    await tm.getServiceAccountToken('ns', 'sa', spec());
    failWith(new ApiStatusError('POST: 403 Forbidden', 403, 'Forbidden'));
    clock.step(3000_000);
    expect((await tm.getServiceAccountToken('ns', 'sa', spec())).status?.token).toBe('token-1');
    clock.step(700_000);
    await expect(tm.getServiceAccountToken('ns', 'sa', spec())).rejects.toThrow(/expired and refresh failed: POST: 403 Forbidden/);
    await expect(tm.getServiceAccountToken('ns', 'sa', spec('other'))).rejects.toThrow('failed to fetch token: POST: 403 Forbidden');
  });

  it('forgets a pod’s tokens, and drops expired ones every minute', async () => {
    const { clock, tm } = setup();
    const ac = new AbortController();
    tm.start(ac.signal);
    await tm.getServiceAccountToken('ns', 'sa', spec('a'));
    await tm.getServiceAccountToken('ns', 'sa', spec('b', 600));
    expect(tm.size()).toBe(2);
    tm.deletePodTokens('a');
    expect(tm.size()).toBe(1);
    clock.step(600_000 + 60_000);
    expect(tm.size()).toBe(0);
    ac.abort();
  });
});
