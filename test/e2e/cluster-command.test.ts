/**
 * `npm run cluster` (scripts/cluster.sh): `up --nodes 2` on the control plane of the e2e run (reused, so it
 * is left running) gives two Ready kubelet-ts nodes, each with its own containerd, that run a Deployment;
 * `down` then leaves no process, mount, bridge, state directory or Node object of its own. The cluster's
 * directories, bridges and subnet are this test's own (KTS_CLUSTER_*), so it runs beside other instances.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { describeCluster, getOrUndefined, kubectl, kubectlApply, kubectlJson } from './cluster-env.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(import.meta.url), '../../..');

describeCluster('npm run cluster: a local cluster in one command', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `kts-e2e-cl-${id}`;
  const env: Record<string, string> = {
    KTS_CLUSTER_DIR: `/var/lib/kts-e2e-cluster-${id}`,
    KTS_CLUSTER_RUN: `/run/kts-ecl-${id}`,
    KTS_CLUSTER_BRIDGE: `kcl${id}`,
    KTS_CLUSTER_POD_CIDR: '10.66.0.0/16',
    KTS_CLUSTER_NODE_PREFIX: `kts-e2e-cl-${id}`,
  };
  const nodes = [1, 2].map((i) => `${env.KTS_CLUSTER_NODE_PREFIX}-${i}`);
  const cluster = (...args: string[]) =>
    run('bash', [join(root, 'scripts/cluster.sh'), ...args], { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });

  /** What the cluster could leave behind: processes naming its directories, mounts below them, its bridges, the directories. */
  function leftovers(): string[] {
    const mine = (s: string) => s.includes(env.KTS_CLUSTER_DIR) || s.includes(env.KTS_CLUSTER_RUN);
    const out: string[] = [];
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      let cmd: string;
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        continue; // exited meanwhile
      }
      if (mine(cmd)) out.push(`process ${pid}: ${cmd.slice(0, 200)}`);
    }
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const mountPoint = line.split(' ')[4] ?? '';
      if (mine(mountPoint)) out.push(`mount ${mountPoint}`);
    }
    for (const link of readdirSync('/sys/class/net')) if (link.startsWith(env.KTS_CLUSTER_BRIDGE)) out.push(`link ${link}`);
    for (const dir of [env.KTS_CLUSTER_DIR, env.KTS_CLUSTER_RUN]) if (existsSync(dir)) out.push(`directory ${dir}`);
    return out;
  }

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    if (existsSync(env.KTS_CLUSTER_DIR)) await cluster('down').catch(() => undefined);
  });

  it('up → two Ready nodes → a Deployment runs on them → down leaves nothing of its own', async () => {
    // Two free ports apart: node i serves on base + 10i (and its healthz on base + 10i + 8).
    env.KTS_CLUSTER_PORT_BASE = String((await freePort()) - 10);
    const up = await cluster('up', '--nodes', '2');
    const kubeconfig = /^kubeconfig: (\S+)$/m.exec(up.stdout)?.[1];
    expect(kubeconfig, up.stdout).toBeDefined();
    expect(up.stdout).toContain(`kubectl:    kubectl --kubeconfig ${kubeconfig} get nodes`);
    expect(up.stdout).toContain('docker.io/kubelet-ts/busybox:1.0');
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig!, 'get', 'nodes', ...nodes, '--no-headers']);
    expect(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(/\s+/).slice(0, 2)),
    ).toEqual(nodes.map((n) => [n, 'Ready']));

    await kubectl('create', 'namespace', ns);
    await kubectlApply(ns, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }],
                },
              },
            },
            terminationGracePeriodSeconds: 2,
            containers: [{ name: 'web', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', '3600'] }],
          },
        },
      },
    });
    await expect
      .poll(
        async () => {
          const list = await kubectlJson<{ items: { spec: { nodeName?: string }; status?: { phase?: string } }[] }>(
            '-n',
            ns,
            'get',
            'pods',
          );
          return list.items.filter((p) => p.status?.phase === 'Running' && nodes.includes(p.spec.nodeName ?? '')).length;
        },
        { timeout: 90_000, interval: 500 },
      )
      .toBe(2);

    const status = await cluster('status');
    expect(status.stdout).toContain(`${nodes[1]}: Ready`);

    await cluster('down');
    expect(leftovers()).toEqual([]);
    for (const n of nodes) expect(await getOrUndefined('node', n)).toBeUndefined();
    // The control plane was reused, not made: it stays up.
    expect((await kubectl('get', '--raw', '/readyz')).trim()).toBe('ok');
  });
});
