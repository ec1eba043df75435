/**
 * apiserver traffic of one idle node: kubelet-ts and the Go kubelet v1.20.2
 * (from the same Debian source build) registered side by side on the same real
 * control plane, each on its own private containerd with no pods, measured over
 * the same window (default 5 minutes) in one run.
 *
 * - Requests by verb and resource come from the apiserver's audit log
 *   (scripts/control-plane.sh runs it at Metadata level), attributed by user
 *   (system:node:<name>); a request counts when it completes in the window.
 * - Bytes are counted on the wire (TLS included) by a TCP proxy in front of the
 *   apiserver, one per kubelet, so both are measured the same way.
 *
 * Needs `scripts/control-plane.sh build && up` and containerd (installed by
 * scripts/containerd.sh). `npm run bench -- apiserver-traffic [--window 300]`.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync, writeFileSync, openSync, readSync, closeSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AgentProcess } from '../test/e2e/agent-harness.js';
import { pollUntil } from '../test/helpers/poll.js';
import { PrivateContainerd } from '../test/helpers/private-containerd.js';
import { GoKubelet } from './lib/go-kubelet.js';
import { arg, machine, round, writeResults } from './lib/report.js';

const run = promisify(execFile);
const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const CP = join(ROOT, 'scripts/control-plane.sh');

interface Meter {
  port: number;
  up: number;
  down: number;
  server: Server;
}

/** A TCP proxy to the apiserver that counts the bytes each way. */
async function meteredProxy(targetPort: number): Promise<Meter> {
  const meter = { port: 0, up: 0, down: 0 } as Meter;
  meter.server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    client.on('data', (b: Buffer) => (meter.up += b.length));
    upstream.on('data', (b: Buffer) => (meter.down += b.length));
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((r) => meter.server.listen(0, '127.0.0.1', r));
  meter.port = (meter.server.address() as { port: number }).port;
  return meter;
}

async function env(): Promise<Record<string, string>> {
  const { stdout } = await run('bash', [CP, 'env']);
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
}

/** A node kubeconfig whose server is the metering proxy. */
async function kubeconfigVia(node: string, file: string, proxyPort: number): Promise<string> {
  await run('bash', [CP, 'kubeconfig', node, file]);
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(/server: "https:\/\/127\.0\.0\.1:\d+"/, `server: "https://127.0.0.1:${proxyPort}"`),
  );
  return file;
}

interface AuditEvent {
  stage: string;
  verb: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string };
  requestReceivedTimestamp: string;
}

/** Audit events appended to the log since byte `offset`. */
function auditSince(path: string, offset: number): AuditEvent[] {
  const size = statSync(path).size;
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(size - offset);
  readSync(fd, buf, 0, buf.length, offset);
  closeSync(fd);
  return buf
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

function requestsOf(events: AuditEvent[], user: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) {
    if (e.user?.username !== user || e.stage !== 'ResponseComplete') continue;
    const res = e.objectRef?.resource
      ? `${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`
      : '(non-resource)';
    const key = `${e.verb} ${res}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

const kubectlReady = async (admin: string, node: string) => {
  try {
    const { stdout } = await run('kubectl', [
      '--kubeconfig',
      admin,
      'get',
      'node',
      node,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    return stdout.trim() === 'True';
  } catch {
    return false;
  }
};

async function main(): Promise<void> {
  const windowS = Number(arg('window', '300'));
  const e = await env();
  const admin = e.KTS_KUBECONFIG;
  const auditLog = e.KTS_AUDIT_LOG;
  const apiPort = Number(new URL(e.KTS_APISERVER).port);
  const id = randomUUID().slice(0, 5);
  const names = { ts: `traffic-ts-${id}`, go: `traffic-go-${id}` };
  const cdTs = new PrivateContainerd(`tt${id.slice(0, 4)}`, 140);
  const cdGo = new PrivateContainerd(`tg${id.slice(0, 4)}`, 141);
  const meters = { ts: await meteredProxy(apiPort), go: await meteredProxy(apiPort) };
  let agent: AgentProcess | undefined;
  let go: GoKubelet | undefined;
  try {
    await Promise.all([cdTs.up(), cdGo.up()]);
    agent = new AgentProcess(cdTs.endpoint, names.ts, `traffic-${id}`, []);
    agent.extraArgs.push(`--kubeconfig=${await kubeconfigVia(names.ts, join(agent.dir, 'kubeconfig'), meters.ts.port)}`);
    go = new GoKubelet({ endpoint: cdGo.endpoint, nodeName: names.go, namespace: `traffic-${id}` });
    go.opts.extraArgs = [`--kubeconfig=${await kubeconfigVia(names.go, join(go.dir, 'kubeconfig'), meters.go.port)}`];
    await Promise.all([agent.start(), go.start()]);
    for (const n of Object.values(names)) {
      await pollUntil(`node ${n} Ready`, () => kubectlReady(admin, n), { timeoutMs: 120_000, intervalMs: 1000 });
    }
    // Let both settle past start-up (registration, first reports), then measure.
    await new Promise((r) => setTimeout(r, 30_000));
    const offset = statSync(auditLog).size;
    const start = { ts: { ...meters.ts }, go: { ...meters.go } };
    console.log(`measuring ${windowS}s of idle traffic for ${names.ts} and ${names.go}`);
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const events = auditSince(auditLog, offset);
    const side = (k: 'ts' | 'go') => {
      const requests = requestsOf(events, `system:node:${names[k]}`);
      const total = Object.values(requests).reduce((a, b) => a + b, 0);
      return {
        requests,
        totalRequests: total,
        requestsPerMinute: round((total / windowS) * 60, 1),
        bytesUp: meters[k].up - start[k].up,
        bytesDown: meters[k].down - start[k].down,
      };
    };
    const result = { machine: machine(), windowSeconds: windowS, kubeletTs: side('ts'), goKubelet: side('go') };
    const keys = [...new Set([...Object.keys(result.kubeletTs.requests), ...Object.keys(result.goKubelet.requests)])].sort();
    const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 2) : a === 0 ? 1 : Number.POSITIVE_INFINITY);
    const md = [
      `# apiserver traffic of one idle node (${windowS} s, same control plane, same run)`,
      '',
      `Measured ${String(result.machine.date)}; \`npm run bench -- apiserver-traffic --window ${windowS}\`. Requests from the apiserver audit log (by user), bytes on the wire through a TCP proxy per kubelet.`,
      '',
      '| requests (verb resource) | kubelet-ts | Go kubelet 1.20.2 |',
      '|---|---:|---:|',
      ...keys.map((k) => `| ${k} | ${result.kubeletTs.requests[k] ?? 0} | ${result.goKubelet.requests[k] ?? 0} |`),
      `| **total** | **${result.kubeletTs.totalRequests}** | **${result.goKubelet.totalRequests}** |`,
      `| requests/min | ${result.kubeletTs.requestsPerMinute} | ${result.goKubelet.requestsPerMinute} |`,
      `| bytes sent (KiB) | ${round(result.kubeletTs.bytesUp / 1024, 1)} | ${round(result.goKubelet.bytesUp / 1024, 1)} |`,
      `| bytes received (KiB) | ${round(result.kubeletTs.bytesDown / 1024, 1)} | ${round(result.goKubelet.bytesDown / 1024, 1)} |`,
      '',
      `Ratios kubelet-ts / Go: requests ${ratio(result.kubeletTs.totalRequests, result.goKubelet.totalRequests)}, bytes sent ${ratio(result.kubeletTs.bytesUp, result.goKubelet.bytesUp)}, bytes received ${ratio(result.kubeletTs.bytesDown, result.goKubelet.bytesDown)}.`,
      '',
    ].join('\n');
    writeResults('apiserver-traffic', result, md);
    console.log(md);
  } finally {
    await agent?.cleanup().catch(() => undefined);
    await go?.cleanup().catch(() => undefined);
    for (const m of Object.values(meters)) m.server.close();
    await Promise.all([cdTs.down().catch(() => undefined), cdGo.down().catch(() => undefined)]);
    for (const n of Object.values(names)) {
      await run('kubectl', ['--kubeconfig', admin, 'delete', 'node', n, '--ignore-not-found', '--wait=false']).catch(() => undefined);
    }
  }
}

await main();
