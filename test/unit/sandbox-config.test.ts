import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { NamespaceMode, Protocol, SecurityProfile_ProfileType } from '../../src/gen/runtime/v1/api.js';
import {
  generatePodSandboxConfig,
  parseResolvConf,
  podDNSConfig,
  podHostname,
  sysctlToDots,
} from '../../src/workers/sync/sandbox-config.js';

const basePod = (): Pod =>
  PodSchema.parse({
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-1', labels: { app: 'web' }, annotations: { note: 'x' } },
    spec: {
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      containers: [
        {
          name: 'a',
          image: 'nginx',
          ports: [
            { containerPort: 80, hostPort: 8080, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' },
          ],
        },
        {
          name: 'b',
          image: 'nginx',
          ports: [
            { name: 'm', containerPort: 9090 },
            { name: 'm', containerPort: 9091 },
          ],
        },
      ],
    },
  });

const opts = { podLogsDir: '/var/log/pods', clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' };
const RESOLV = '# comment\nnameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch corp.example. lab.example\noptions timeout:2 ndots:2\n';

describe('generatePodSandboxConfig', () => {
  it('metadata, labels, annotations, log directory and hostname', () => {
    const cfg = generatePodSandboxConfig(basePod(), 2, opts);
    expect(cfg.metadata).toEqual({ name: 'web', namespace: 'shop', uid: 'uid-1', attempt: 2 });
    expect(cfg.labels).toEqual({
      app: 'web',
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': 'uid-1',
    });
    expect(cfg.annotations).toEqual({ note: 'x' });
    expect(cfg.logDirectory).toBe('/var/log/pods/shop_web_uid-1');
    expect(cfg.hostname).toBe('web');
  });

  it('the kubelet labels win over pod labels of the same name', () => {
    const p = basePod();
    p.metadata.labels = { 'io.kubernetes.pod.name': 'spoof' };
    expect(generatePodSandboxConfig(p, 0, opts).labels!['io.kubernetes.pod.name']).toBe('web');
  });

  it('port mappings from every container port; duplicate names in a container dropped', () => {
    expect(generatePodSandboxConfig(basePod(), 0, opts).portMappings).toEqual([
      { protocol: Protocol.TCP, containerPort: 80, hostPort: 8080, hostIp: '' },
      { protocol: Protocol.UDP, containerPort: 53, hostPort: 0, hostIp: '10.0.0.1' },
      { protocol: Protocol.TCP, containerPort: 9090, hostPort: 0, hostIp: '' },
    ]);
  });

  it('linux: namespaces, privileged, seccomp, user, groups, sysctls', () => {
    const p = basePod();
    p.spec.hostPID = true;
    p.spec.securityContext = {
      runAsUser: 1000,
      runAsGroup: 3000,
      fsGroup: 2000,
      supplementalGroups: [4, 5],
      sysctls: [{ name: 'net/ipv4/ip_forward', value: '1' }],
    };
    p.spec.initContainers = [{ name: 'i', image: 'x', securityContext: { privileged: true } }];
    const linux = generatePodSandboxConfig(p, 0, opts).linux!;
    expect(linux.cgroupParent).toBe('');
    expect(linux.sysctls).toEqual({ 'net.ipv4.ip_forward': '1' });
    expect(linux.securityContext).toEqual({
      namespaceOptions: { network: NamespaceMode.POD, pid: NamespaceMode.NODE, ipc: NamespaceMode.POD },
      privileged: true,
      seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
      supplementalGroups: [2000n, 4n, 5n],
      runAsUser: { value: 1000n },
      runAsGroup: { value: 3000n },
    });
  });

  it('hostNetwork: NODE network namespace, no hostname, host DNS', () => {
    const p = basePod();
    p.spec.hostNetwork = true;
    const cfg = generatePodSandboxConfig(p, 0, { ...opts, resolvConf: RESOLV });
    expect(cfg.linux!.securityContext!.namespaceOptions!.network).toBe(NamespaceMode.NODE);
    expect(cfg.hostname).toBe('');
    expect(cfg.dnsConfig!.servers).toEqual(['1.1.1.1', '8.8.8.8']);
  });

  it('shareProcessNamespace → POD pid namespace; default CONTAINER', () => {
    const p = basePod();
    expect(generatePodSandboxConfig(p, 0, opts).linux!.securityContext!.namespaceOptions!.pid).toBe(NamespaceMode.CONTAINER);
    p.spec.shareProcessNamespace = true;
    expect(generatePodSandboxConfig(p, 0, opts).linux!.securityContext!.namespaceOptions!.pid).toBe(NamespaceMode.POD);
  });
});

describe('podHostname', () => {
  it('uses spec.hostname when set', () => {
    const p = basePod();
    p.spec.hostname = 'front';
    expect(podHostname(p)).toBe('front');
  });
  it('truncates to 63 and trims trailing - and .', () => {
    const p = basePod();
    p.metadata.name = `${'a'.repeat(61)}-.bbbb`;
    expect(podHostname(p)).toBe('a'.repeat(61));
  });
  it('rejects an invalid spec.hostname', () => {
    const p = basePod();
    p.spec.hostname = 'Not_Valid';
    expect(() => podHostname(p)).toThrow(/not a valid DNS label/);
  });
  it('setHostnameAsFQDN with a subdomain', () => {
    const p = basePod();
    p.spec.subdomain = 'svc1';
    (p.spec as Record<string, unknown>)['setHostnameAsFQDN'] = true;
    expect(podHostname(p, 'cluster.local')).toBe('web.svc1.shop.svc.cluster.local');
  });
});

describe('podDNSConfig', () => {
  it('ClusterFirst: cluster servers, namespace searches then host searches, ndots:5', () => {
    expect(podDNSConfig(basePod(), { ...opts, resolvConf: RESOLV })).toEqual({
      servers: ['10.96.0.10'],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
      options: ['ndots:5'],
    });
  });
  it('ClusterFirst without clusterDNS falls back to Default', () => {
    expect(podDNSConfig(basePod(), { resolvConf: RESOLV }).servers).toEqual(['1.1.1.1', '8.8.8.8']);
  });
  it('ClusterFirst on hostNetwork uses the host; ClusterFirstWithHostNet uses the cluster', () => {
    const p = basePod();
    p.spec.hostNetwork = true;
    expect(podDNSConfig(p, { ...opts, resolvConf: RESOLV }).servers).toEqual(['1.1.1.1', '8.8.8.8']);
    p.spec.dnsPolicy = 'ClusterFirstWithHostNet';
    expect(podDNSConfig(p, { ...opts, resolvConf: RESOLV }).servers).toEqual(['10.96.0.10']);
  });
  it('Default: the node resolv.conf', () => {
    const p = basePod();
    p.spec.dnsPolicy = 'Default';
    expect(podDNSConfig(p, { ...opts, resolvConf: RESOLV })).toEqual({
      servers: ['1.1.1.1', '8.8.8.8'],
      searches: ['corp.example', 'lab.example'],
      options: ['timeout:2', 'ndots:2'],
    });
  });
  it('Default with --resolv-conf="" disables lookups (127.0.0.1, search ".")', () => {
    const p = basePod();
    p.spec.dnsPolicy = 'Default';
    expect(podDNSConfig(p, opts)).toEqual({ servers: ['127.0.0.1'], searches: ['.'], options: [] });
  });
  it('None: only spec.dnsConfig', () => {
    const p = basePod();
    p.spec.dnsPolicy = 'None';
    p.spec.dnsConfig = { nameservers: ['9.9.9.9'], searches: ['a.example'], options: [{ name: 'ndots', value: '1' }, { name: 'edns0' }] };
    expect(podDNSConfig(p, { ...opts, resolvConf: RESOLV })).toEqual({
      servers: ['9.9.9.9'],
      searches: ['a.example'],
      options: ['ndots:1', 'edns0'],
    });
  });
  it('dnsConfig is merged in: options override by name, duplicates dropped, 3 servers max', () => {
    const p = basePod();
    p.spec.dnsConfig = {
      nameservers: ['10.96.0.10', '1.2.3.4', '5.6.7.8', '9.9.9.9'],
      searches: ['cluster.local', 'x.example'],
      options: [{ name: 'ndots', value: '2' }],
    };
    expect(podDNSConfig(p, opts)).toEqual({
      servers: ['10.96.0.10', '1.2.3.4', '5.6.7.8'],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'x.example'],
      options: ['ndots:2'],
    });
  });
});

describe('helpers', () => {
  it('parseResolvConf keeps the last search line', () => {
    expect(parseResolvConf('search a b\nsearch c .\n').searches).toEqual(['c']);
  });
  it('sysctlToDots', () => {
    expect(sysctlToDots('net/ipv4/ip_forward')).toBe('net.ipv4.ip_forward');
    expect(sysctlToDots('net/ipv4/conf/eno2.100/rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(sysctlToDots('kernel.shm_rmid_forced')).toBe('kernel.shm_rmid_forced');
  });
});
