import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/main/config/load-config.js';
import { configz } from '../../src/main/server/configz.js';
import { runningPodList } from '../../src/main/server/running-pods.js';
import { loadServingCert } from '../../src/main/server/serving-cert.js';
import type { Pod } from '../../src/api/pod.js';
import { StatsProvider, stringifyWithBigints } from '../../src/main/server/stats-provider.js';
import type { PodStatus } from '../../src/runtime/types.js';
import type { CriStatsSnapshot } from '../../src/workers/protocol/stats-wire.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeHostProbe } from '../fakes/fake-host-probe.js';

describe('configz', () => {
  it('the effective config in v1beta1 JSON: durations as Go strings, nested server settings', () => {
    const { config } = resolveConfig(['--sync-frequency=90s', '--client-ca-file=/ca.crt'], { hostname: 'n', availableParallelism: 2 });
    const z = configz(config);
    expect(z).toMatchObject({
      syncFrequency: '1m30s',
      fileCheckFrequency: '20s',
      runtimeRequestTimeout: '2m0s',
      port: 10250,
      maxPods: 110,
      containerLogMaxSize: '10Mi',
      authentication: { x509: { clientCAFile: '/ca.crt' }, webhook: { enabled: false, cacheTTL: '2m0s' }, anonymous: { enabled: true } },
      authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' } },
    });
    expect(z).not.toHaveProperty('apiVersion');
    expect(z).not.toHaveProperty('workerThreads'); // flag-only settings are not KubeletConfiguration fields
  });
});

const ctr = (id: string, name: string, state: 'running' | 'exited') => ({
  id,
  name,
  state,
  createdAt: 1n,
  startedAt: 1n,
  finishedAt: 0n,
  exitCode: 0,
  reason: '',
  message: '',
  image: 'busybox:1',
  imageRef: 'x',
  restartCount: 0,
  hash: '',
  sandboxId: 's',
});

describe('runningPodList (upstream GetRunningPods + ToAPIPod)', () => {
  it('pods with a running container or a ready sandbox, with their running containers', () => {
    const s = (uid: string, sb: 'ready' | 'notready', containers: ReturnType<typeof ctr>[]): PodStatus => ({
      uid,
      name: uid,
      namespace: 'ns',
      ips: [],
      sandboxStatuses: [{ id: 's', state: sb, createdAt: 1n, attempt: 0, ips: [], hostNetwork: false }],
      containerStatuses: containers,
      timestamp: 0,
    });
    const list = runningPodList([
      s('a', 'ready', [ctr('1', 'web', 'running'), ctr('2', 'old', 'exited')]),
      s('b', 'notready', [ctr('3', 'x', 'exited')]),
    ]);
    expect(list).toEqual({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: {},
      items: [
        {
          metadata: { name: 'a', namespace: 'ns', uid: 'a', creationTimestamp: null },
          spec: { containers: [{ name: 'web', image: 'busybox:1', resources: {} }] },
          status: {},
        },
      ],
    });
  });
});

describe('StatsProvider', () => {
  const host = new FakeHostProbe({ memoryBytes: 8_000n });
  host.workingSetBytes = 3_000n;
  host.pidFigures = { max: 4096, running: 99 };
  const S = 1_000_000_000n;
  const snapshot = (t: bigint, core: bigint): CriStatsSnapshot => ({
    pods: [
      {
        uid: 'u1',
        name: 'web',
        namespace: 'default',
        sandboxId: 'sb',
        createdAt: 5n * S,
        cpu: { time: t, usageCoreNanoSeconds: core },
        memory: { time: t, workingSetBytes: 2n ** 60n },
        containers: [
          {
            id: 'c1',
            name: 'app',
            createdAt: 6n * S,
            cpu: { time: t, usageCoreNanoSeconds: core },
            memory: { time: t, workingSetBytes: 10n },
          },
        ],
      },
    ],
    imageFs: { time: t, usedBytes: 7n, mountpoint: '/var/lib/containerd' },
  });

  it('Summary: usageNanoCores from the previous sample; exact uint64 JSON; /metrics/resource text', async () => {
    const clock = new FakeClock(1_000_000);
    let snap = snapshot(10n * S, 1n * S);
    let nodeCore = 100n * S;
    const p = new StatsProvider({
      runner: { run: (async () => snap) as never },
      host,
      nodeName: 'n1',
      rootDir: '/',
      clock,
      startedAt: 0,
      nodeCpuNs: () => nodeCore,
    });
    const first = await p.summary();
    expect((first.pods as { cpu: { usageNanoCores?: bigint } }[])[0].cpu.usageNanoCores).toBeUndefined();
    snap = snapshot(12n * S, 2n * S); // 1 core-second over 2 s = half a core
    clock.step(2000);
    nodeCore += 3n * S;
    const second = await p.summary();
    const pod = (second.pods as Record<string, unknown>[])[0];
    expect(pod.cpu).toEqual({ time: '1970-01-01T00:00:12Z', usageNanoCores: 500_000_000n, usageCoreNanoSeconds: 2n * S });
    expect((second.node as { cpu: unknown }).cpu).toEqual({
      time: '1970-01-01T00:16:42Z',
      usageNanoCores: 1_500_000_000n,
      usageCoreNanoSeconds: 103n * S,
    });
    expect(second.node).toMatchObject({
      nodeName: 'n1',
      memory: { availableBytes: 5000n, workingSetBytes: 3000n },
      fs: { availableBytes: 400n, capacityBytes: 1000n, usedBytes: 600n, inodesUsed: 10n },
      rlimit: { maxpid: 4096, curproc: 99 },
      runtime: { imageFs: { usedBytes: 7n } },
    });
    expect(stringifyWithBigints(second)).toContain('"workingSetBytes":1152921504606846976');
    const text = await p.resourceMetrics();
    expect(text).toContain('container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 2 12000');
    expect(text).toContain('container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 10 12000');
    expect(text).toContain('container_start_time_seconds{container="app",namespace="default",pod="web"} 6');
    expect(text).toContain('pod_memory_working_set_bytes{namespace="default",pod="web"} 1152921504606846976 12000');
    expect(text).toContain('node_memory_working_set_bytes 3000 1002000');
    expect(text).toContain('resource_scrape_error 0');
  });

  it("Summary network: the node's interfaces from the host; a pod's default interface eth0, or an empty name without one", async () => {
    const iface = (name: string, rx: bigint) => ({ name, rxBytes: rx, rxErrors: 0n, txBytes: rx / 2n, txErrors: 1n });
    const netHost = new FakeHostProbe({ memoryBytes: 8_000n });
    netHost.interfaces = [iface('ens3', 10n), iface('eth0', 2n ** 60n)];
    const snap = snapshot(10n * S, 1n * S);
    snap.pods.push({ ...snap.pods[0], uid: 'u2', name: 'db', network: { time: 9n * S, interfaces: [iface('net1', 5n)] } });
    snap.pods[0] = { ...snap.pods[0], network: { time: 9n * S, interfaces: [iface('eth0', 6n), iface('net1', 7n)] } };
    const asked: unknown[] = [];
    const run = async (req: unknown) => (asked.push(req), snap);
    const p = new StatsProvider({
      runner: { run: run as never },
      host: netHost,
      nodeName: 'n1',
      rootDir: '/',
      clock: new FakeClock(5000),
      startedAt: 0,
      nodeCpuNs: () => 1n,
    });
    const s = await p.summary();
    expect((s.node as Record<string, unknown>).network).toEqual({
      time: '1970-01-01T00:00:05Z',
      ...iface('eth0', 2n ** 60n),
      interfaces: [iface('ens3', 10n), iface('eth0', 2n ** 60n)],
    });
    const [web, db] = s.pods as Record<string, unknown>[];
    expect(web.network).toEqual({ time: '1970-01-01T00:00:09Z', ...iface('eth0', 6n), interfaces: [iface('eth0', 6n), iface('net1', 7n)] });
    expect(db.network).toEqual({ time: '1970-01-01T00:00:09Z', name: '', interfaces: [iface('net1', 5n)] });
    // only_cpu_and_memory leaves network out, as upstream's GetCPUAndMemoryStats; so does an unreadable host file.
    expect((await p.summary(true)).node).not.toHaveProperty('network');
    expect(asked).toEqual([
      { type: 'criStats', procNetwork: true },
      { type: 'criStats', procNetwork: false },
    ]);
    netHost.interfaces = undefined;
    expect((await p.summary()).node).not.toHaveProperty('network');
  });

  it('a failed CRI read is resource_scrape_error 1', async () => {
    const p = new StatsProvider({
      runner: { run: async () => Promise.reject(new Error('down')) },
      host,
      nodeName: 'n1',
      rootDir: '/',
      clock: new FakeClock(),
      startedAt: 0,
      nodeCpuNs: () => 1n,
    });
    expect(await p.resourceMetrics()).toContain('resource_scrape_error 1');
  });

  it('Summary: volumes, container logs and pod ephemeral storage of a known pod (du in the pool)', async () => {
    const snap = snapshot(10n * S, 1n * S);
    snap.pods[0].containers[0].rootfs = { time: 10n * S, usedBytes: 4096n, inodesUsed: 3n };
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      spec: {
        containers: [{ name: 'app', image: 'x' }],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'token', secret: { secretName: 's' } },
          { name: 'host', hostPath: { path: '/tmp' } },
        ],
      },
    } as Pod;
    const asked: string[][] = [];
    const du = (path: string, usedBytes: bigint, inodesUsed: bigint) => ({ path, usedBytes, inodesUsed });
    const runner = {
      run: (async (req: { type: string; paths?: string[] }) => {
        if (req.type === 'criStats') return snap;
        asked.push(req.paths!);
        return [
          du('/root/pods/u1/volumes/kubernetes.io~empty-dir/scratch', 40n * 1024n * 1024n, 2n),
          du('/root/pods/u1/volumes/kubernetes.io~secret/token', 8192n, 4n),
          du('/logs/default_web_u1/app', 12288n, 2n),
        ];
      }) as never,
    };
    const p = new StatsProvider({
      runner,
      host,
      nodeName: 'n1',
      rootDir: '/root',
      podLogsDir: '/logs',
      podOf: (uid) => (uid === 'u1' ? pod : undefined),
      clock: new FakeClock(1_000_000),
      startedAt: 0,
      nodeCpuNs: () => 1n,
    });
    const summary = await p.summary();
    // hostPath is not measured; the walk covers the two volumes and the container's log directory.
    expect(asked).toEqual([
      [
        '/root/pods/u1/volumes/kubernetes.io~empty-dir/scratch',
        '/root/pods/u1/volumes/kubernetes.io~secret/token',
        '/logs/default_web_u1/app',
      ],
    ]);
    const pod0 = (summary.pods as Record<string, unknown>[])[0];
    const fs = { availableBytes: 400n, capacityBytes: 1000n, inodesFree: 90n, inodes: 100n };
    const anyTime: unknown = expect.any(String);
    expect(pod0.volume).toEqual([
      { time: anyTime, ...fs, usedBytes: 40n * 1024n * 1024n, inodesUsed: 2n, name: 'scratch' },
      { time: anyTime, ...fs, usedBytes: 8192n, inodesUsed: 4n, name: 'token' },
    ]);
    expect((pod0.containers as Record<string, unknown>[])[0].logs).toEqual({
      time: anyTime,
      ...fs,
      usedBytes: 12288n,
      inodesUsed: 2n,
    });
    // rootfs + logs + the emptyDir (the secret is not a local ephemeral volume); no /etc/hosts under /root here.
    expect(pod0['ephemeral-storage']).toEqual({
      time: anyTime,
      ...fs,
      usedBytes: 4096n + 12288n + 40n * 1024n * 1024n,
      inodesUsed: 3n + 2n + 2n,
    });
    // /metrics/resource asks for CPU and memory only: no disk walk.
    await p.resourceMetrics();
    expect(asked).toHaveLength(1);
  });
});

describe('serving certificate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-cert-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('generates kubelet.crt/kubelet.key once (serving cert then its CA) and reuses them', async () => {
    const a = await loadServingCert({
      tlsCertFile: '',
      tlsPrivateKeyFile: '',
      certDir: join(dir, 'pki'),
      hostname: '10.0.0.7',
      nowMs: Date.UTC(2026, 0, 1),
    });
    expect(a.generated).toBe(true);
    const [leaf, ca] = a.cert.split(/(?=-----BEGIN CERTIFICATE-----)/).map((p) => new X509Certificate(p));
    expect(leaf.subject).toBe(`CN=10.0.0.7@${Date.UTC(2026, 0, 1) / 1000}`);
    expect(leaf.subjectAltName).toBe('IP Address:10.0.0.7');
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(new Date(leaf.validFrom).getTime()).toBe(Date.UTC(2026, 0, 1) - 3600_000);
    const b = await loadServingCert({ tlsCertFile: '', tlsPrivateKeyFile: '', certDir: join(dir, 'pki'), hostname: 'other', nowMs: 0 });
    expect([b.generated, b.cert]).toEqual([false, a.cert]);
  });

  it('configured files are used as they are; unreadable ones are a clear error', async () => {
    writeFileSync(join(dir, 'c.pem'), readFileSync(join(dir, 'pki', 'kubelet.crt')));
    writeFileSync(join(dir, 'k.pem'), readFileSync(join(dir, 'pki', 'kubelet.key')));
    expect(
      (
        await loadServingCert({
          tlsCertFile: join(dir, 'c.pem'),
          tlsPrivateKeyFile: join(dir, 'k.pem'),
          certDir: '/nonexistent',
          hostname: 'h',
          nowMs: 0,
        })
      ).generated,
    ).toBe(false);
    await expect(
      loadServingCert({ tlsCertFile: join(dir, 'nope'), tlsPrivateKeyFile: join(dir, 'k.pem'), certDir: '/x', hostname: 'h', nowMs: 0 }),
    ).rejects.toThrow(/cannot load the serving certificate/);
  });
});
