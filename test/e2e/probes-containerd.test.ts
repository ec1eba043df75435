/**
 * Probes, container logs and log rotation on real containerd (issue 11):
 * readiness httpGet against busybox httpd, an exec liveness probe that starts
 * failing, a startup probe holding liveness back, tcpSocket probes; then
 * /containerLogs over the agent's HTTPS server and CRI log rotation.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
type Json = Record<string, unknown>;

describeE2E('probes, container logs and log rotation on containerd', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-pr-${run}`;
  let agent: AgentProcess;

  const manifest = (name: string, containers: Json[]): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { terminationGracePeriodSeconds: 2, containers: containers.map((c) => ({ image: BUSYBOX, ...c })) },
  });
  const ready = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const cs = (p: Pod | undefined) => p?.status?.containerStatuses?.[0];
  const waitPod = <T>(what: string, name: string, cond: (p: Pod) => T | undefined | false, timeoutMs = 90_000) =>
    pollUntil(
      `${what} (${name})`,
      async () => {
        const p = await agent.pod(name);
        return p ? cond(p) : undefined;
      },
      { timeoutMs },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- agent log tail ---\n${agent.tail()}`);
    });
  /** Event lines of the agent's log (klog text: `… events] "<message>" … reason="<reason>"`). */
  const events = (re: RegExp) => agent.logs.filter((l) => l.includes(' events] ') && re.test(l));

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns, [
      '--v=3',
      '--container-log-max-size=2Ki',
      '--container-log-max-files=3',
    ]);
    await agent.start();
  });

  afterAll(async () => {
    const slow = setTimeout(() => console.error(`cleanup is slow; agent log tail:\n${agent?.tail(40)}`), 30_000);
    await agent?.cleanup();
    clearTimeout(slow);
  });

  it('readiness httpGet against busybox httpd: Ready only once the server is up', async () => {
    agent.writeManifest(
      'web',
      manifest('web', [
        {
          name: 'httpd',
          command: ['sh', '-c', 'sleep 5; mkdir -p /www && echo hello > /www/index.html && exec httpd -f -p 8080 -h /www'],
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { port: 'http', path: '/index.html' }, periodSeconds: 1 },
        },
      ]),
    );
    // Running but not serving: not Ready, and the probe's failures say why.
    await waitPod('running, not ready', 'web', (p) => p.status?.phase === 'Running' && cs(p)?.ready === false && ready(p) === 'False');
    const refused =
      /Readiness probe failed: Get \\"http:\/\/[0-9.]+:8080\/index.html\\": dial tcp [0-9.]+:8080: connect: connection refused.*reason="Unhealthy"/;
    await pollUntil('a refused readiness probe', () => events(refused).length > 0, {
      timeoutMs: 30_000,
    });
    const p = await waitPod('Ready', 'web', (x) => ready(x) === 'True' && x, 60_000);
    expect(cs(p)).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(p.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status).toBe('True');
  });

  it('an exec liveness probe that starts failing restarts the container, with an Unhealthy event', async () => {
    agent.writeManifest(
      'wedge',
      manifest('wedge', [
        {
          name: 'app',
          command: ['sh', '-c', 'touch /tmp/healthy; sleep 4; rm /tmp/healthy; sleep 3600'],
          livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 2 },
        },
      ]),
    );
    await waitPod('restarted by the liveness probe', 'wedge', (p) => (cs(p)?.restartCount ?? 0) >= 1, 90_000);
    await pollUntil(
      'the Unhealthy and Killing events',
      () =>
        events(/Liveness probe failed: cat: can't open '\/tmp\/healthy'.*reason="Unhealthy"/).length > 0 &&
        events(/Container app failed liveness probe, will be restarted.*reason="Killing"/).length > 0,
    );
  });

  it('a startup probe holds liveness back until the container has started', async () => {
    agent.writeManifest(
      'slow',
      manifest('slow', [
        {
          name: 'app',
          command: ['sh', '-c', 'sleep 6; touch /tmp/started; sleep 3600'],
          startupProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 30 },
          // Would restart the container on its first run if it ran before the startup probe succeeded.
          livenessProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 1 },
        },
      ]),
    );
    await waitPod('running, not started', 'slow', (p) => cs(p)?.state?.running && cs(p)?.started === false);
    const p = await waitPod('started', 'slow', (x) => cs(x)?.started === true && x, 60_000);
    expect(cs(p)).toMatchObject({ restartCount: 0, ready: true });
    expect(events(/Startup probe failed/).some((l) => l.includes(`slow-${agent.nodeName}`))).toBe(true);
    // Several liveness periods later, still no restart and no liveness failure.
    await pollUntil('12 s after the container started', async () => {
      const started = Date.parse(cs(p)?.state?.running?.startedAt ?? '');
      return Date.now() - started > 12_000;
    });
    expect(cs(await agent.pod('slow'))?.restartCount).toBe(0);
    expect(events(/Liveness probe failed/).some((l) => l.includes(`slow-${agent.nodeName}`))).toBe(false);
  });

  it('tcpSocket probes: an open port is ready, a closed one is not', async () => {
    agent.writeManifest(
      'tcp',
      manifest('tcp', [
        {
          name: 'open',
          command: ['httpd', '-f', '-p', '9090'],
          readinessProbe: { tcpSocket: { port: 9090 }, periodSeconds: 1 },
        },
        {
          name: 'closed',
          command: ['sleep', '3600'],
          readinessProbe: { tcpSocket: { port: 9191 }, periodSeconds: 1 },
        },
      ]),
    );
    const p = await waitPod('open ready', 'tcp', (x) => x.status?.containerStatuses?.find((c) => c.name === 'open')?.ready === true && x);
    expect(p.status?.containerStatuses?.find((c) => c.name === 'closed')?.ready).toBe(false);
    expect(ready(p)).toBe('False');
    await pollUntil(
      'the refused probe event',
      () => events(/Readiness probe failed: dial tcp [0-9.]+:9191: connect: connection refused/).length > 0,
    );
  });

  const https = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: agent.port, path, rejectUnauthorized: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('/containerLogs over HTTPS: current and --previous instance, tail and timestamps', async () => {
    agent.writeManifest(
      'talk',
      manifest('talk', [{ name: 'app', command: ['sh', '-c', 'echo one; echo two; echo three; sleep 2; exit 1'] }]),
    );
    await waitPod('restarted once', 'talk', (p) => (cs(p)?.restartCount ?? 0) >= 1 && cs(p)?.lastState?.terminated);
    const path = `/containerLogs/${ns}/talk-${agent.nodeName}/app`;
    expect(await https(`${path}?previous=true`)).toEqual({ status: 200, body: 'one\ntwo\nthree\n' });
    expect((await https(`${path}?previous=true&tailLines=1`)).body).toBe('three\n');
    expect((await https(`${path}?previous=true&timestamps=true&tailLines=1`)).body).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z three\n$/,
    );
    expect(await https(`/containerLogs/${ns}/nope/app`)).toEqual({ status: 404, body: 'pod "nope" does not exist' });
  });

  it('container logs are rotated at containerLogMaxSize through ReopenContainerLog, keeping containerLogMaxFiles', async () => {
    agent.writeManifest(
      'chatty',
      manifest('chatty', [
        {
          name: 'app',
          command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "line $i padding padding padding padding"; sleep 0.05; done'],
        },
      ]),
    );
    const p = await waitPod('running', 'chatty', (x) => cs(x)?.state?.running && x);
    const dir = join(agent.dir, 'pod-logs', `${ns}_chatty-${agent.nodeName}_${p.metadata.uid}`, 'app');
    const files = () => readdirSync(dir).sort();
    await pollUntil('a rotated, compressed log', () => files().some((f) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(f)), { timeoutMs: 60_000 });
    await pollUntil('at most 3 files at a time, the current one kept', () => files().includes('0.log') && files().length <= 3, {
      timeoutMs: 30_000,
    });
    // The current file keeps receiving lines after the reopen.
    const tail = await pollUntil('a line in the reopened file', async () => {
      const r = await https(`/containerLogs/${ns}/chatty-${agent.nodeName}/app?tailLines=1`);
      return r.body !== '' && r;
    });
    expect(tail.body).toMatch(/^line \d+ padding/);
  });
});
