/**
 * kubelet-ts-compare with the upstream Go kubelet v1.20.2 and kubelet-ts,
 * each running the same static pods on the real containerd. They cannot run
 * at once (each kills runtime pods it does not know), so the Go kubelet runs
 * first and compare saves its window to a snapshot; then kubelet-ts runs and
 * compare puts that snapshot beside kubelet-ts's live window. The Go
 * kubelet's /metrics is https with client-certificate authentication, as on
 * a real node.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GoKubelet } from '../../bench/lib/go-kubelet.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const root = resolve(import.meta.dirname, '../..');
const PODS = 3;

/** Runs the built kubelet-ts-compare; resolves with its exit code and output (never rejects on a non-zero exit). */
function compare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [join(root, 'bin/kubelet-ts-compare.js'), ...args], { timeout: 120_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const relistCount = (section: string) => Number(/^kubelet_pleg_relist_duration_seconds_count (\d+)$/m.exec(section)?.[1]);
/** start/end relist counts of one source in a saved snapshot (read with a regex, not the project's parser). */
function savedCounts(snapshot: string, name: string): number {
  const parts = snapshot.split(/^(# kubelet-ts-compare snapshot .*)$/m);
  const at = (phase: string) => parts[parts.findIndex((p) => p.includes(`name="${name}"`) && p.includes(`phase="${phase}"`)) + 1];
  return relistCount(at('end')) - relistCount(at('start'));
}

describeE2E('kubelet-ts-compare: the Go kubelet v1.20.2 and kubelet-ts on containerd', () => {
  const run = randomUUID().slice(0, 6);
  let dir: string;
  let cri: CriClient;

  const running = (ns: string) =>
    pollUntil(
      `${PODS} running containers in namespace ${ns}`,
      async () => {
        const r = await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns } } });
        return r.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).length === PODS;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kts-e2e-compare-'));
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 30_000 });
  });
  afterAll(() => {
    cri?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the side-by-side table', async () => {
    const goSnapshot = join(dir, 'go.prom');
    const both = join(dir, 'both.prom');
    const manifest = (i: number, ns: string) => podManifest(`p${i}`, ns, [{ name: 'c', command: ['sleep', '3600'] }]);

    const go = new GoKubelet({ endpoint: CONTAINERD_ENDPOINT, nodeName: `cmp-go-${run}`, namespace: `cmp-go-${run}`, auth: 'x509' });
    try {
      for (let i = 0; i < PODS; i++) go.writeManifest(`p${i}`, manifest(i, go.opts.namespace));
      await go.start();
      await running(go.opts.namespace);
      // Without a client certificate the Go kubelet answers 401, and compare says what to pass.
      const denied = await compare(['--window', '0', '--cacert', go.pki.caCert, `go=${go.metricsUrl}`]);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/401 Unauthorized: the kubelet wants credentials: pass --token, or --cert and --key/);
      const tls = ['--cacert', go.pki.caCert, '--cert', go.pki.clientCert, '--key', go.pki.clientKey];
      const r = await compare(['--window', '5s', ...tls, '--save', goSnapshot, `go=${go.metricsUrl}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^go: https:\/\/127\.0\.0\.1:\d+\/metrics, over a 5\.\d s window/m);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- Go kubelet log tail ---\n${go.tail(40)}`, { cause: err });
    } finally {
      await go.cleanup();
    }
    // The harness leaves nothing behind: no mount under its root dir, no temp dir, no pod of its namespace.
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(go.rootDir);
    expect(existsSync(go.dir)).toBe(false);
    expect((await cri.listPodSandbox({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: go.opts.namespace } } })).items).toEqual([]);

    const ts = new AgentProcess(CONTAINERD_ENDPOINT, `cmp-ts-${run}`, `cmp-ts-${run}`);
    try {
      for (let i = 0; i < PODS; i++) ts.writeManifest(`p${i}`, manifest(i, ts.namespace));
      await ts.start();
      await running(ts.namespace);
      // start() waits for /healthz; the read-only server (/metrics) may start a moment later, as the pods may start before it.
      await pollUntil('kubelet-ts to serve /metrics', async () => (await fetch(ts.metricsUrl).catch(() => undefined))?.ok === true, {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      const r = await compare(['--window', '5s', '--save', both, goSnapshot, `ts=${ts.metricsUrl}`]);
      expect(r.code, r.stderr).toBe(0);
      console.log(
        `kubelet-ts-compare, Go kubelet v1.20.2 (saved window) vs kubelet-ts (live window), ${PODS} pods each on containerd:\n${r.stdout}`,
      );
      const snapshot = readFileSync(both, 'utf8');
      const [goCount, tsCount] = [savedCounts(snapshot, 'go'), savedCounts(snapshot, 'ts')];
      expect(goCount).toBeGreaterThanOrEqual(2);
      expect(tsCount).toBeGreaterThanOrEqual(2);
      const lines = r.stdout.split('\n');
      expect(lines).toContainEqual(expect.stringMatching(/^stat\s+go\s+ts\s+ts\/go$/));
      const countRow = lines[lines.indexOf('kubelet_pleg_relist_duration_seconds') + 1];
      expect(countRow).toMatch(new RegExp(`^ {2}count\\s+${goCount}\\s+${tsCount}\\s+${(tsCount / goCount).toFixed(2)}×$`));
      for (const stat of ['mean', 'p50', 'p90', 'p99'])
        expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ {2}${stat} \\(ms\\)\\s+[\\d.]+\\s+[\\d.]+\\s+[\\d.]+×$`)));
      // Both kubelets list sandboxes through the same CRI operation name.
      expect(lines).toContain('kubelet_runtime_operations_duration_seconds{operation_type="list_podsandbox"}');
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- kubelet-ts log tail ---\n${ts.tail(40)}`, { cause: err });
    } finally {
      await ts.cleanup();
    }

    // The saved pair reproduces the comparison later, here as markdown.
    const md = await compare(['--markdown', both]);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^\| metric \| stat \| go \| ts \| ts\/go \|$/m);
  });
});
