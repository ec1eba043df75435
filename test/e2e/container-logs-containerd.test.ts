/**
 * Container log files on real containerd (issue 15): a crash-looping
 * container keeps at most containerLogMaxFiles files and no log of its
 * removed instances; each attempt writes a new `<restartCount>.log`; the
 * `/var/log/containers`-style link (here under the test's --container-logs-dir)
 * resolves to the current log; a removed pod leaves no log directory and no link.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_UID } from '../../src/runtime/types.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

describeE2E('container log files on containerd', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-cl-${run}`;
  const MAX_FILES = 2;
  let agent: AgentProcess;
  let cri: CriClient;

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns, [`--container-log-max-files=${MAX_FILES}`]);
    await agent.start();
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT });
  });

  afterAll(async () => {
    cri?.close();
    await agent?.cleanup();
  });

  it('a crash-looping container keeps at most containerLogMaxFiles log files, none of removed instances; its link resolves; pod removal leaves nothing', async () => {
    agent.writeManifest(
      'crash',
      podManifest('crash', ns, [{ name: 'app', command: ['sh', '-c', 'echo "attempt at $(date +%s)"; sleep 1; exit 3'] }]),
    );
    const pod = await agent.waitPod(
      'restarted 3 times',
      'crash',
      (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3 && p,
      240_000,
    );
    const uid = pod.metadata.uid!;
    const podDir = join(agent.dir, 'pod-logs', `${ns}_crash-${agent.nodeName}_${uid}`);
    const appDir = join(podDir, 'app');
    const instances = async () =>
      (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_UID]: uid } } })).containers.map((c) => ({
        id: c.id,
        attempt: c.metadata?.attempt ?? -1,
      }));

    // After each death the older dead instances are removed with their logs: the files are those of live instances.
    const { files, live } = await agent.until('the log files are those of the remaining instances', async () => {
      const files = readdirSync(appDir).sort();
      const live = await instances();
      const expected = live.map((c) => `${c.attempt}.log`).sort();
      return JSON.stringify(files) === JSON.stringify(expected) && { files, live };
    });
    expect(files.length).toBeLessThanOrEqual(MAX_FILES);
    // Each attempt wrote its own file: the newest is the current restart count.
    const restarts = (await agent.pod('crash'))!.status!.containerStatuses![0].restartCount;
    expect(files.map((f) => Number(f.split('.')[0])).some((n) => n >= restarts - 1)).toBe(true);
    for (const f of files) expect(readFileSync(join(appDir, f), 'utf8')).toMatch(/attempt at \d+/);

    // The link of a live instance resolves to its log file; links of removed instances are gone.
    const links = join(agent.dir, 'containers');
    const newest = live.reduce((a, b) => (a.attempt > b.attempt ? a : b));
    const link = join(links, `crash-${agent.nodeName}_${ns}_app-${newest.id}.log`);
    await agent.until('the link of the newest instance', () => existsSync(link));
    expect(realpathSync(link)).toBe(realpathSync(join(appDir, `${newest.attempt}.log`)));
    await agent.until('only links of live instances', async () => {
      const ids = new Set((await instances()).map((c) => c.id));
      const mine = readdirSync(links).filter((l) => l.startsWith(`crash-${agent.nodeName}_`));
      return mine.length > 0 && mine.every((l) => ids.has(l.slice(l.lastIndexOf('-') + 1, -'.log'.length)));
    });

    // Removing the pod removes its containers, log directory and links (container GC runs every minute).
    agent.deleteManifest('crash');
    await agent.until('no containers of the removed pod', async () => (await instances()).length === 0, 120_000);
    await agent.until('no log directory of the removed pod', () => !existsSync(podDir), 150_000);
    await agent.until(
      'no links of the removed pod',
      () => readdirSync(links).every((l) => !l.startsWith(`crash-${agent.nodeName}_`)),
      150_000,
    );
  });
});
