/**
 * The kubelet server with the real control plane (issue 11): `kubectl logs`
 * (plain, -f and --previous) through the apiserver, which reaches the node at
 * its InternalIP with its client certificate (O=system:masters); x509 client
 * certificates against the cluster CA, TokenReview and SubjectAccessReview
 * through the apiserver with the node's credentials; /logs/ traversal.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makePki } from '../helpers/pki.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import {
  ADMIN_KUBECONFIG,
  CP_DIR,
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlApply,
  SECURED_SERVER_FLAGS,
  serviceAccountToken,
  startClusterAgent,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface Reply {
  status: number;
  body: string;
  location?: string;
}

describeCluster('the kubelet server with the real control plane', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-srv-${id}`;
  const ns = `kts-e2e-srv-${id}`;
  let agent: AgentProcess;
  let saToken = '';

  const podDoc = (name: string, command: string[]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': nodeName },
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: IMAGE, command }],
    },
  });

  /** A request to the kubelet's HTTPS port with the given credentials. */
  const kubelet = (path: string, creds: { cert?: string; key?: string; token?: string } = {}) =>
    new Promise<Reply>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: agent.port,
          path,
          rejectUnauthorized: false,
          ...(creds.cert && { cert: readFileSync(creds.cert), key: readFileSync(creds.key!) }),
          headers: creds.token ? { authorization: `Bearer ${creds.token}` } : {},
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, location: res.headers.location }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const admin = { cert: join(CP_DIR, 'pki/admin.crt'), key: join(CP_DIR, 'pki/admin.key') };

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    await kubectl('-n', ns, 'create', 'serviceaccount', 'reader');
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, []);
    agent.extraArgs.push(...SECURED_SERVER_FLAGS);
    await startClusterAgent(agent);
    // The token controller gives the service account a token secret.
    saToken = await serviceAccountToken(ns, 'reader');
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('kubectl logs, logs -f and logs --previous for a pod on the kubelet-ts node', async () => {
    await kubectlApply(
      ns,
      podDoc('talker', ['sh', '-c', 'echo hello from talker; i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done']),
    );
    await kubectlApply(ns, podDoc('crasher', ['sh', '-c', 'echo attempt at $(date +%s); sleep 2; exit 3']));
    await kubectl('-n', ns, 'wait', '--for=condition=Ready', 'pod/talker', '--timeout=120s');
    await pollUntil('talker logs', async () => (await kubectl('-n', ns, 'logs', 'talker')).startsWith('hello from talker\ntick 1\n'), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(await kubectl('-n', ns, 'logs', 'talker', '--tail=1')).toMatch(/^tick \d+\n$/);

    // -f: the stream keeps delivering new lines.
    const follow = spawn('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, 'logs', '-f', 'talker', '--tail=1']);
    let streamed = '';
    follow.stdout.on('data', (c: Buffer) => (streamed += c.toString()));
    try {
      await pollUntil('three new ticks streamed', () => (streamed.match(/tick \d+/g) ?? []).length >= 3, { timeoutMs: 30_000 });
      const ticks = (streamed.match(/tick (\d+)/g) ?? []).map((t) => Number(t.split(' ')[1]));
      expect(ticks.slice(1)).toEqual(ticks.slice(1).map((_, i) => ticks[0] + i + 1));
    } finally {
      follow.kill();
    }

    // --previous: the instance before the current one.
    await pollUntil(
      'crasher restarted',
      async () => {
        const p = await getOrUndefined<{ status?: { containerStatuses?: { restartCount: number }[] } }>('pod', '-n', ns, 'crasher');
        return (p?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const previous = await kubectl('-n', ns, 'logs', 'crasher', '--previous');
    expect(previous).toMatch(/^attempt at \d+\n$/);
  });

  it('an unauthenticated request to the kubelet port gets 401', async () => {
    expect(await kubelet('/pods')).toMatchObject({ status: 401, body: 'Unauthorized' });
  });

  it('a client certificate the cluster CA did not sign fails the TLS connection', async () => {
    const foreign = makePki(agent.dir, 'system:admin');
    await expect(kubelet('/pods', { cert: foreign.clientCert, key: foreign.clientKey })).rejects.toThrow(/socket hang up|ECONNRESET|EPIPE/);
  });

  it('a token whose SubjectAccessReview is denied gets 403; the admin certificate is allowed', async () => {
    expect(await kubelet('/pods', { token: saToken })).toEqual({
      status: 403,
      body: `Forbidden (user=system:serviceaccount:${ns}:reader, verb=get, resource=nodes, subresource=proxy)`,
    });
    expect((await kubelet('/stats/summary', { token: saToken })).body).toBe(
      `Forbidden (user=system:serviceaccount:${ns}:reader, verb=get, resource=nodes, subresource=stats)`,
    );
    expect(await kubelet('/pods', { token: 'not-a-token' })).toMatchObject({ status: 401 });
    const pods = await kubelet('/pods', admin);
    expect(pods.status).toBe(200);
    expect((JSON.parse(pods.body) as { kind: string }).kind).toBe('PodList');
  });

  it('/logs/ lists the node log directory, and /logs/../ escapes nothing', async () => {
    const list = await kubelet('/logs/', admin);
    expect(list.status).toBe(200);
    expect(list.body).toMatch(/^<pre>\n/);
    for (const path of [
      '/logs/../',
      '/logs/../etc/passwd',
      '/logs/..%2fetc%2fpasswd',
      '/logs/%2e%2e/etc/passwd',
      '/logs/..%2f..%2f..%2fetc%2fshadow',
    ]) {
      const r = await kubelet(path, admin);
      expect(r.body, path).not.toMatch(/root:/);
      expect([301, 404], path).toContain(r.status);
      if (r.status === 301) expect(r.location!.startsWith('/logs/'), path).toBe(false);
    }
  });
});
