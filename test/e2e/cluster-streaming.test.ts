/**
 * kubectl exec, attach, port-forward and cp through the real v1.20.2
 * apiserver to a kubelet-ts node on containerd (issue 30): the apiserver
 * opens the kubelet's /exec, /attach and /portForward with an upgrade. The
 * machine's kubectl (1.32) asks for exec and attach (and cp's exec) with a
 * WebSocket offering v5.channel.k8s.io, which the kubelet bridges to
 * containerd's streaming server over SPDY (v5-bridge.ts); port-forward and
 * SPDY requests are proxied as they are. Also the kubelet's own refusals
 * (401, 403) and that 50 concurrent sessions leave no socket.
 *
 * Runs on the containerd at KTS_CRI_ENDPOINT (default: the shared one; give
 * it a private one when others test) and the control plane of
 * scripts/control-plane.sh.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';
import { AgentProcess } from './agent-harness.js';
import {
  ADMIN_KUBECONFIG,
  deleteNodeObjects,
  describeCluster,
  kubectl,
  kubectlApply,
  SECURED_SERVER_FLAGS,
  serviceAccountToken,
  startClusterAgent,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const run = promisify(execFile);
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

/** kubectl as the admin, with stdin; resolves with the exit code and output whatever the code. */
function kubectlRun(args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Open sockets of a process (its fds that are sockets). */
/** The inodes of the TCP sockets in the agent's network namespace whose remote port is `port`. */
function socketsToPort(pid: number, port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && parseInt(f[2].split(':')[1], 16) === port) inodes.add(f[9]);
    }
  }
  return inodes;
}

/**
 * The agent's open sockets, without its connections to the apiserver: its client keeps idle connections for
 * reuse (keep-alive), and concurrent sessions' authentication and authorization reviews may add one to that
 * pool. Those are not a session's sockets.
 */
function socketCount(pid: number): number {
  const server = /server:\s*"?([^"\s]+)/.exec(readFileSync(ADMIN_KUBECONFIG, 'utf8'))?.[1];
  if (!server) throw new Error(`${ADMIN_KUBECONFIG}: no server address`);
  const toApiserver = socketsToPort(pid, Number(new URL(server).port || 443));
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith('socket:') && !toApiserver.has(link.slice('socket:['.length, -1))) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describeCluster('kubectl exec, attach, port-forward and cp on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-str-${id}`;
  const ns = `kts-e2e-str-${id}`;
  let agent: AgentProcess;
  let saToken = '';
  const pod = (name: string, containers: Record<string, unknown>[]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': nodeName },
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      containers,
    },
  });
  const exec = (args: string[], input = '') => kubectlRun(['-n', ns, 'exec', ...(input ? ['-i'] : []), 'box', '--', ...args], input);

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    await kubectl('-n', ns, 'create', 'serviceaccount', 'nobody');
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, []);
    // --v=4 logs each streaming session and how it was served (the last check reads them).
    agent.extraArgs.push(...SECURED_SERVER_FLAGS, '--v=4');
    await startClusterAgent(agent);
    await kubectlApply(ns, pod('box', [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }]));
    await kubectlApply(
      ns,
      pod('web', [
        {
          name: 'http',
          image: IMAGE,
          command: ['sh', '-c', 'mkdir -p /w && echo hello-from-pod > /w/index.html && exec httpd -f -p 80 -h /w'],
        },
        { name: 'reader', image: IMAGE, command: ['sh', '-c', 'while read l; do echo got:$l; done'], stdin: true },
      ]),
    );
    await kubectl('-n', ns, 'wait', '--for=condition=Ready', 'pod/box', 'pod/web', '--timeout=120s');
    saToken = await serviceAccountToken(ns, 'nobody');
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it("exec prints the hostname and exits with the command's code; stdin reaches the command", async () => {
    expect(await exec(['sh', '-c', 'echo $HOSTNAME; exit 3'])).toMatchObject({ code: 3, stdout: 'box\n' });
    expect(await exec(['cat'], 'hi\n')).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  it("exec -it gets a terminal of the size of the caller's", async () => {
    // `script` gives kubectl a terminal; the size set on it reaches the container through the resize stream,
    // which may land just after the command starts: the command waits for it (at most 10 s).
    const wait = 'for i in 1 2 3 4 5 6 7 8 9 10; do s=$(stty size 2>/dev/null); [ "$s" = "31 97" ] && break; sleep 1; done';
    const { stdout } = await run('script', [
      '-qec',
      `stty cols 97 rows 31; kubectl --kubeconfig ${ADMIN_KUBECONFIG} -n ${ns} exec -it box -- sh -c 'tty; ${wait}; echo size=$s'`,
      '/dev/null',
    ]);
    expect(stdout).toMatch(/\/dev\/pts\/\d+/);
    expect(stdout).toMatch(/size=31 97/);
  });

  it('cp copies a 10 MB file into the container and back, byte for byte', async () => {
    const src = join(agent.dir, 'ten.bin');
    const back = join(agent.dir, 'ten.back');
    const data = randomBytes(10 * 1024 * 1024);
    writeFileSync(src, data);
    await kubectl('-n', ns, 'cp', src, 'box:/tmp/ten.bin');
    await kubectl('-n', ns, 'cp', 'box:/tmp/ten.bin', back);
    expect(readFileSync(back).equals(data)).toBe(true);
  });

  it('attach -i reaches a container started with stdin: true', async () => {
    const r = await kubectlRun(['-n', ns, 'attach', '-i', 'web', '-c', 'reader'], 'ping\n');
    expect(r.code).toBe(0);
    await pollUntil('the line in the container', async () => (await kubectl('-n', ns, 'logs', 'web', '-c', 'reader')).includes('got:ping'));
  });

  it('port-forward reaches the HTTP server in the pod', async () => {
    const local = await freePort();
    const pf = spawn('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, 'port-forward', 'pod/web', `${local}:80`]);
    try {
      const body = await pollUntil(
        'an answer through the forward',
        async () => {
          const r = await fetch(`http://127.0.0.1:${local}/`).catch(() => undefined);
          return r?.ok ? await r.text() : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 300 },
      );
      expect(body).toBe('hello-from-pod\n');
    } finally {
      pf.kill();
    }
  });

  it('the kubelet refuses an unauthenticated exec (401) and one without nodes/proxy (403); kubectl names an unknown container', async () => {
    const direct = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: agent.port,
            method: 'POST',
            path: `/exec/${ns}/box/main?command=true&output=1`,
            rejectUnauthorized: false,
            headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', ...headers },
          },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await direct({})).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(await direct({ Authorization: `Bearer ${saToken}` })).toEqual({
      status: 403,
      body: `Forbidden (user=system:serviceaccount:${ns}:nobody, verb=create, resource=nodes, subresource=proxy)`,
    });
    const r = await kubectlRun(['-n', ns, 'exec', 'box', '-c', 'nope', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('container nope is not valid for pod box');
  });

  it('kubectl exec, attach and cp took the WebSocket v5 bridge in one request each; port-forward was proxied', async () => {
    // The agent's klog text lines: I… "Streaming request" kind="exec" … protocols="v5.channel.k8s.io" …
    const sessions = () =>
      agent.logs.flatMap((l) => {
        const msg = /\] "(Streaming session ended|Streaming request)"/.exec(l)?.[1];
        if (!msg) return [];
        const field = (k: string) => new RegExp(` ${k}="([^"]*)"`).exec(l)?.[1];
        return [{ msg, kind: field('kind'), via: field('via'), protocols: field('protocols') }];
      });
    const before = sessions().length;
    expect(await exec(['true'])).toMatchObject({ code: 0 });
    // Exactly one request for this exec (no refused WebSocket then SPDY), offering v5, served by the bridge.
    const mine = await pollUntil('the session to end', () => {
      const s = sessions().slice(before);
      return s.some((o) => o.msg === 'Streaming session ended') ? s : undefined;
    });
    expect(mine.filter((o) => o.msg === 'Streaming request')).toHaveLength(1);
    expect(mine.find((o) => o.msg === 'Streaming request')?.protocols).toContain('v5.channel.k8s.io');
    expect(mine.find((o) => o.msg === 'Streaming session ended')).toMatchObject({ kind: 'exec', via: 'websocket-v5-bridge' });
    // Over the whole file: every exec and attach session was bridged (the 10 MB cp included), port-forward proxied.
    const via = (kind: string) => [
      ...new Set(
        sessions()
          .filter((o) => o.msg === 'Streaming session ended' && o.kind === kind)
          .map((o) => o.via),
      ),
    ];
    await pollUntil("the port-forward session's end", () => via('portForward').length > 0);
    expect(via('exec')).toEqual(['websocket-v5-bridge']);
    expect(via('attach')).toEqual(['websocket-v5-bridge']);
    expect(via('portForward')).toEqual(['proxy']);
  });

  it('50 concurrent exec sessions all complete with their output, and leave no socket open in the agent', async () => {
    const before = socketCount(agent.pid!);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => exec(['sh', '-c', `echo session-${i}`])));
    results.forEach((r, i) => expect(r, `session ${i}`).toMatchObject({ code: 0, stdout: `session-${i}\n` }));
    await pollUntil('the agent back to its sockets', () => socketCount(agent.pid!) <= before, { timeoutMs: 30_000, intervalMs: 500 });
  }, 180_000);
});
