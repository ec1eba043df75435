/**
 * kubeadm's and kind's default KubeletConfiguration (test/fixtures/kubelet-config/)
 * start the agent on the embedded simulated runtime and run a static pod.
 *
 * The test environment overrides with flags only what a test machine cannot
 * have: the ports, directories and runtime endpoint, the client CA file
 * (generated), and the webhook authentication and authorization, which need
 * an apiserver (--kubeconfig) upstream as here.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { createLogger } from '../../src/common/logger.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { main } from '../../src/main/cli.js';
import { makePki } from '../helpers/pki.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/kubelet-config/${name}`, import.meta.url));

describe('upstream default configurations start the agent', () => {
  let dir: string | undefined;
  let agent: AgentHandle | undefined;

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['kubeadm-default.yaml', [] as string[], ['rotateCertificates'], 'cgroupDriver systemd has no effect either'],
    [
      'kind-default.yaml',
      ['--node-ip=127.0.0.1', '--node-labels=ingress-ready=true', '--provider-id=kind://docker/kind/kind-control-plane'],
      [] as string[],
      'cgroupRoot /kubelet and cgroupDriver systemd have no effect either',
    ],
  ])('%s', async (file, extraFlags, explained, cgroupNote) => {
    dir = mkdtempSync(join(tmpdir(), 'kts-upstream-config-'));
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(
      join(manifests, 'web.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'kube-system' },
        spec: { containers: [{ name: 'web', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', 'infinity'] }] },
      }),
    );
    const pki = makePki(dir);
    const readOnlyPort = await freePort();
    const argv = [
      `--config=${fixture(file)}`,
      ...extraFlags,
      '--container-runtime-endpoint=sim',
      `--pod-manifest-path=${manifests}`,
      `--root-dir=${join(dir, 'root')}`,
      `--pod-logs-dir=${join(dir, 'pods')}`,
      `--container-logs-dir=${join(dir, 'containers')}`,
      `--client-ca-file=${pki.caCert}`,
      '--authentication-token-webhook=false',
      '--authorization-mode=AlwaysAllow',
      '--hostname-override=upstream-node',
      '--address=127.0.0.1',
      `--port=${await freePort()}`,
      `--read-only-port=${readOnlyPort}`,
      `--healthz-port=${await freePort()}`,
      '--worker-threads=1',
      '--logging-format=json',
    ];
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const code = await main(argv, {
      logDestination: sink,
      run: async ({ config, sources }) => {
        agent = await startAgent(config, createLogger({ format: 'json', verbosity: 0, destination: sink }), { sources });
        return 0;
      },
    });
    expect(code).toBe(0);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const noEffect = records.filter((r) => r.msg === 'Setting has no effect in kubelet-ts').map((r) => r.setting);
    for (const name of explained) expect(noEffect).toContain(name);
    // cgroupsPerQOS is true (upstream's default), but the simulated runtime gets no cgroups, as upstream's hollow
    // node: one line says so and names the cgroup settings that then do nothing (systemd is not refused here).
    expect(records.filter((r) => String(r.msg).startsWith('cgroupsPerQOS')).map((r) => r.msg)).toEqual([
      expect.stringMatching(new RegExp(`^cgroupsPerQOS has no effect with the simulated runtime: .*${cgroupNote}\\)$`)),
    ]);
    expect(records.find((r) => r.msg === 'Starting kubelet-ts')).toMatchObject({ nodeName: 'upstream-node', configFile: fixture(file) });

    const running = await pollUntil(
      'the static pod runs',
      async () => {
        const list = (await (await fetch(`http://127.0.0.1:${readOnlyPort}/pods`)).json()) as { items: Pod[] };
        return list.items.find((p) => p.metadata.name === 'web-upstream-node' && p.status?.phase === 'Running');
      },
      { timeoutMs: 45_000, intervalMs: 200 },
    );
    expect(running.status?.containerStatuses?.[0]?.ready).toBe(true);
  });
});
