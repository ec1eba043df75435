/**
 * Service environment variables: upstream envvars.FromServices (names and
 * values), the projection of services onto a pod (master service always,
 * same-namespace services with enableServiceLinks), the lister over a fake
 * apiserver, and how makeEnvironmentVariables merges them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import { ServiceLister, serviceEnvVars, servicesForPod, type ServiceLike } from '../../src/main/kubelet/service-env.js';
import { makeEnvironmentVariables } from '../../src/workers/sync/container-config.js';
import { FakeApiClient } from '../fakes/fake-api-client.js';
import { pollUntil } from '../helpers/poll.js';

const svc = (namespace: string, name: string, clusterIP: string, ports: NonNullable<ServiceLike['spec']>['ports']): ServiceLike => ({
  metadata: { namespace, name },
  spec: { clusterIP, ports },
});

describe('serviceEnvVars (upstream envvars.FromServices)', () => {
  it.each<{ name: string; service: ServiceLike; env: Record<string, string> }>([
    {
      name: 'one unnamed TCP port (the kubernetes service)',
      service: svc('default', 'kubernetes', '10.96.0.1', [{ port: 443, protocol: 'TCP' }]),
      env: {
        KUBERNETES_SERVICE_HOST: '10.96.0.1',
        KUBERNETES_SERVICE_PORT: '443',
        KUBERNETES_PORT: 'tcp://10.96.0.1:443',
        KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
        KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
        KUBERNETES_PORT_443_TCP_PORT: '443',
        KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
      },
    },
    {
      name: 'dashes become underscores; named ports; UDP; protocol defaults to TCP',
      service: svc('ns', 'my-dns', '10.96.0.10', [
        { name: 'dns-udp', port: 53, protocol: 'UDP' },
        { name: 'metrics', port: 9153 },
      ]),
      env: {
        MY_DNS_SERVICE_HOST: '10.96.0.10',
        MY_DNS_SERVICE_PORT: '53',
        MY_DNS_SERVICE_PORT_DNS_UDP: '53',
        MY_DNS_SERVICE_PORT_METRICS: '9153',
        MY_DNS_PORT: 'udp://10.96.0.10:53',
        MY_DNS_PORT_53_UDP: 'udp://10.96.0.10:53',
        MY_DNS_PORT_53_UDP_PROTO: 'udp',
        MY_DNS_PORT_53_UDP_PORT: '53',
        MY_DNS_PORT_53_UDP_ADDR: '10.96.0.10',
        MY_DNS_PORT_9153_TCP: 'tcp://10.96.0.10:9153',
        MY_DNS_PORT_9153_TCP_PROTO: 'tcp',
        MY_DNS_PORT_9153_TCP_PORT: '9153',
        MY_DNS_PORT_9153_TCP_ADDR: '10.96.0.10',
      },
    },
    {
      name: 'an IPv6 cluster IP is bracketed in URLs',
      service: svc('ns', 'v6', 'fd00::1', [{ port: 80 }]),
      env: {
        V6_SERVICE_HOST: 'fd00::1',
        V6_SERVICE_PORT: '80',
        V6_PORT: 'tcp://[fd00::1]:80',
        V6_PORT_80_TCP: 'tcp://[fd00::1]:80',
        V6_PORT_80_TCP_PROTO: 'tcp',
        V6_PORT_80_TCP_PORT: '80',
        V6_PORT_80_TCP_ADDR: 'fd00::1',
      },
    },
    { name: 'a headless service gives nothing', service: svc('ns', 'headless', 'None', [{ port: 80 }]), env: {} },
    { name: 'no cluster IP yet gives nothing', service: svc('ns', 'pending', '', [{ port: 80 }]), env: {} },
  ])('$name', ({ service, env }) => {
    expect(serviceEnvVars([service])).toEqual(env);
  });
});

describe('servicesForPod (upstream getServiceEnvVarMap)', () => {
  const all = [
    svc('default', 'kubernetes', '10.96.0.1', [{ port: 443 }]),
    svc('default', 'web', '10.96.0.2', [{ port: 80 }]),
    svc('app', 'db', '10.96.0.3', [{ port: 5432 }]),
    svc('app', 'kubernetes', '10.96.0.4', [{ port: 1 }]),
    svc('app', 'headless', 'None', [{ port: 80 }]),
    svc('other', 'cache', '10.96.0.5', [{ port: 6379 }]),
  ];
  const names = (ss: ServiceLike[]) => ss.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort();
  it.each([
    // A same-namespace service named like the master service replaces it (upstream's map assignment).
    { ns: 'app', links: true, want: ['app/db', 'app/kubernetes'] },
    { ns: 'app', links: false, want: ['default/kubernetes'] },
    { ns: 'default', links: true, want: ['default/kubernetes', 'default/web'] },
    { ns: 'default', links: false, want: ['default/kubernetes'] },
    { ns: 'empty', links: true, want: ['default/kubernetes'] },
  ])('namespace $ns, enableServiceLinks $links', ({ ns, links, want }) => {
    expect(names(servicesForPod(all, ns, links))).toEqual(want);
  });
});

describe('ServiceLister', () => {
  const stop = new AbortController();
  afterEach(() => stop.abort());

  it('refuses until the services are listed, then follows the watch', async () => {
    const api = new FakeApiClient();
    const path = '/api/v1/services';
    api.put(path, { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 443 }] } });
    const lister = new ServiceLister({ client: api, clock: realClock, logger: silentLogger() });
    expect(() => lister.envFor('app', true)).toThrow(/services have not yet been read at least once/);
    lister.start(stop.signal);
    await pollUntil('the watch', () => api.openWatches() === 1);
    expect(lister.envFor('app', true).KUBERNETES_SERVICE_HOST).toBe('10.96.0.1');
    expect(lister.envFor('app', true).DB_SERVICE_HOST).toBeUndefined();
    api.put(path, { metadata: { name: 'db', namespace: 'app' }, spec: { clusterIP: '10.96.0.3', ports: [{ port: 5432 }] } });
    await pollUntil('db seen', () => lister.envFor('app', true).DB_SERVICE_HOST === '10.96.0.3');
    expect(lister.envFor('app', false).DB_SERVICE_HOST).toBeUndefined();
    api.remove(path, 'db');
    await pollUntil('db gone', () => lister.envFor('app', true).DB_SERVICE_HOST === undefined);
  });
});

describe('makeEnvironmentVariables with service variables', () => {
  const pod = { metadata: { name: 'p', namespace: 'app', uid: 'u' }, spec: { containers: [] } } as unknown as Pod;
  const serviceEnv = { DB_SERVICE_HOST: '10.96.0.3', A_SERVICE_PORT: '1', MINE: 'from-service' };
  const container = {
    name: 'c',
    image: 'i',
    env: [
      { name: 'MINE', value: 'declared' },
      { name: 'URL', value: 'pg://$(DB_SERVICE_HOST)/x' },
    ],
  } as Container;
  it('expands $(VAR) from service variables, appends the others in name order, and a declared name wins', () => {
    expect(makeEnvironmentVariables(pod, container, { kind: 'regular', restartCount: 0, serviceEnv } as never)).toEqual([
      { name: 'MINE', value: 'declared' },
      { name: 'URL', value: 'pg://10.96.0.3/x' },
      { name: 'A_SERVICE_PORT', value: '1' },
      { name: 'DB_SERVICE_HOST', value: '10.96.0.3' },
    ]);
  });
  it('without service variables (standalone) nothing is added', () => {
    expect(makeEnvironmentVariables(pod, container, { kind: 'regular', restartCount: 0 } as never)).toEqual([
      { name: 'MINE', value: 'declared' },
      { name: 'URL', value: 'pg://$(DB_SERVICE_HOST)/x' },
    ]);
  });
});
