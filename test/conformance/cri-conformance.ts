/**
 * One CRI conformance suite, run unchanged against the simulated runtime
 * (test/integration) and real containerd (test/e2e). containerd is the
 * reference: where the two differ, the simulator is fixed.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { CriError, CriNotFoundError } from '../../src/common/errors.js';
import { ContainerState, PodSandboxState, type PodSandboxConfig } from '../../src/gen/runtime/v1/api.js';
import type { DeepPartial } from '../../src/gen/runtime/v1/api.js';
import { pollUntil } from '../helpers/poll.js';

export const BUSYBOX_IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
/** A loopback reference: refused at once, with no DNS look-up and nothing sent off the machine. */
export const UNREACHABLE_IMAGE = '127.0.0.1:1/none:1';

export interface ConformanceTarget {
  endpoint: string;
  /** Released in afterAll. */
  close(): Promise<void>;
}

const SUITE_LABEL = 'kubelet-ts.test/conformance';

export function defineCriConformance(runtimeName: string, start: () => Promise<ConformanceTarget>): void {
  describe(`CRI conformance: ${runtimeName}`, () => {
    let target: ConformanceTarget;
    let cri: CriClient;
    let logRoot: string;
    const run = randomUUID().slice(0, 8);
    const sandboxes: string[] = [];

    beforeAll(async () => {
      target = await start();
      cri = new CriClient({ runtimeEndpoint: target.endpoint, timeoutMs: 60_000 });
      await cri.waitForReady(30_000);
      logRoot = mkdtempSync(join(tmpdir(), 'kts-conf-'));
    });

    afterAll(async () => {
      for (const id of sandboxes) {
        await cri.stopPodSandbox({ podSandboxId: id }).catch(() => undefined);
        await cri.removePodSandbox({ podSandboxId: id }).catch(() => undefined);
      }
      cri?.close();
      if (logRoot) rmSync(logRoot, { recursive: true, force: true });
      await target?.close();
    });

    function sandboxConfig(name: string): DeepPartial<PodSandboxConfig> {
      const uid = randomUUID();
      return {
        metadata: { name: `${name}-${run}`, namespace: 'conformance', uid, attempt: 0 },
        hostname: name,
        logDirectory: join(logRoot, `conformance_${name}_${uid}`),
        labels: { [SUITE_LABEL]: run, 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': `${name}-${run}` },
        annotations: { 'kubelet-ts.test/note': name },
        linux: { securityContext: { namespaceOptions: { network: 0 } } },
      };
    }

    async function runSandbox(name: string): Promise<{ id: string; config: DeepPartial<PodSandboxConfig> }> {
      const config = sandboxConfig(name);
      const { podSandboxId } = await cri.runPodSandbox({ config });
      sandboxes.push(podSandboxId);
      return { id: podSandboxId, config };
    }

    async function runContainer(
      sandbox: { id: string; config: DeepPartial<PodSandboxConfig> },
      name: string,
      command: string[],
      labels: Record<string, string> = {},
    ): Promise<string> {
      const { containerId } = await cri.createContainer({
        podSandboxId: sandbox.id,
        config: {
          metadata: { name, attempt: 0 },
          image: { image: BUSYBOX_IMAGE },
          command,
          logPath: `${name}/0.log`,
          labels: { [SUITE_LABEL]: run, 'io.kubernetes.container.name': name, ...labels },
          annotations: { 'io.kubernetes.container.restartCount': '0' },
        },
        sandboxConfig: sandbox.config,
      });
      await cri.startContainer({ containerId });
      return containerId;
    }

    async function waitExited(id: string) {
      return pollUntil(
        `container ${id} to exit`,
        async () => {
          const { status } = await cri.containerStatus({ containerId: id });
          return status?.state === ContainerState.CONTAINER_EXITED ? status : undefined;
        },
        { timeoutMs: 60_000 },
      );
    }

    it('reports version and readiness', async () => {
      const v = await cri.version({ version: 'v1' });
      expect(v.runtimeApiVersion).toBe('v1');
      expect(v.runtimeName).not.toBe('');
      const s = await cri.status({});
      const cond = (t: string) => s.status?.conditions.find((c) => c.type === t)?.status;
      expect(cond('RuntimeReady')).toBe(true);
      expect(cond('NetworkReady')).toBe(true);
    });

    it('runs a sandbox with a pod IP, stops it and removes it', async () => {
      const sb = await runSandbox('lifecycle');
      expect(sb.id).toMatch(/^[0-9a-f]{64}$/);
      const ready = await cri.podSandboxStatus({ podSandboxId: sb.id });
      expect(ready.status?.state).toBe(PodSandboxState.SANDBOX_READY);
      expect(ready.status?.metadata?.name).toBe(sb.config.metadata?.name);
      expect(ready.status?.metadata?.uid).toBe(sb.config.metadata?.uid);
      expect(ready.status?.labels[SUITE_LABEL]).toBe(run);
      expect(ready.status?.annotations['kubelet-ts.test/note']).toBe('lifecycle');
      expect(ready.status?.network?.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(ready.status?.createdAt).toBeGreaterThan(1_600_000_000_000_000_000n);

      await cri.stopPodSandbox({ podSandboxId: sb.id });
      const stopped = await cri.podSandboxStatus({ podSandboxId: sb.id });
      expect(stopped.status?.state).toBe(PodSandboxState.SANDBOX_NOTREADY);
      await cri.removePodSandbox({ podSandboxId: sb.id });
      await expect(cri.podSandboxStatus({ podSandboxId: sb.id })).rejects.toBeInstanceOf(CriNotFoundError);
    });

    it('runs a container to its exit code and writes a CRI-format log', async () => {
      const sb = await runSandbox('exit');
      const id = await runContainer(sb, 'exit3', ['sh', '-c', 'echo hello-conformance; exit 3']);
      const status = await waitExited(id);
      expect(status.exitCode).toBe(3);
      expect(status.reason).toBe('Error');
      expect(status.startedAt).toBeGreaterThan(0n);
      // containerd records started_at after StartContainer returns, so a process that exits at once can
      // show finished_at < started_at (seen once in CI); only creation is guaranteed to come first.
      expect(status.finishedAt).toBeGreaterThanOrEqual(status.createdAt);
      expect(status.metadata?.name).toBe('exit3');
      expect(status.labels['io.kubernetes.container.name']).toBe('exit3');
      expect(status.annotations['io.kubernetes.container.restartCount']).toBe('0');
      const logFile = join(sb.config.logDirectory!, 'exit3/0.log');
      const line = await pollUntil(
        'log line',
        () =>
          existsSync(logFile) &&
          readFileSync(logFile, 'utf8')
            .split('\n')
            .find((l) => l.includes('hello-conformance')),
      );
      expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z stdout F hello-conformance$/);
    });

    it('exits 0 as Completed', async () => {
      const sb = await runSandbox('zero');
      const id = await runContainer(sb, 'ok', ['true']);
      const status = await waitExited(id);
      expect(status.exitCode).toBe(0);
      expect(status.reason).toBe('Completed');
    });

    it('stops a running container: SIGTERM ends sleep (143); a TERM-ignoring one is killed after the timeout (137)', async () => {
      const sb = await runSandbox('stop');
      const polite = await runContainer(sb, 'sleeper', ['sleep', '3600']);
      const stubborn = await runContainer(sb, 'stubborn', ['sh', '-c', 'trap "" TERM; while true; do sleep 1; done']);
      const running = await cri.containerStatus({ containerId: polite });
      expect(running.status?.state).toBe(ContainerState.CONTAINER_RUNNING);
      await cri.stopContainer({ containerId: polite, timeout: 5n });
      const termed = await cri.containerStatus({ containerId: polite });
      expect(termed.status?.state).toBe(ContainerState.CONTAINER_EXITED);
      expect(termed.status?.exitCode).toBe(143);
      await cri.stopContainer({ containerId: stubborn, timeout: 1n });
      const killed = await cri.containerStatus({ containerId: stubborn });
      expect(killed.status?.state).toBe(ContainerState.CONTAINER_EXITED);
      expect(killed.status?.exitCode).toBe(137);
    });

    it('stops with timeout 0 by killing at once (137)', async () => {
      const sb = await runSandbox('kill');
      const id = await runContainer(sb, 'sleeper', ['sleep', '3600']);
      await cri.stopContainer({ containerId: id, timeout: 0n });
      const status = await cri.containerStatus({ containerId: id });
      expect(status.status?.exitCode).toBe(137);
    });

    it('filters ListContainers and ListPodSandbox by id, state, sandbox and labels', async () => {
      const a = await runSandbox('filter-a');
      const b = await runSandbox('filter-b');
      const runningA = await runContainer(a, 'run', ['sleep', '3600'], { role: 'server' });
      const exitedA = await runContainer(a, 'done', ['true'], { role: 'job' });
      const runningB = await runContainer(b, 'run', ['sleep', '3600'], { role: 'server' });
      await waitExited(exitedA);

      const byBox = await cri.listContainers({ filter: { podSandboxId: a.id } });
      expect(byBox.containers.map((c) => c.id).sort()).toEqual([runningA, exitedA].sort());
      const byState = await cri.listContainers({ filter: { podSandboxId: a.id, state: { state: ContainerState.CONTAINER_RUNNING } } });
      expect(byState.containers.map((c) => c.id)).toEqual([runningA]);
      const byLabel = await cri.listContainers({ filter: { labelSelector: { [SUITE_LABEL]: run, role: 'server' } } });
      expect(byLabel.containers.map((c) => c.id).sort()).toEqual([runningA, runningB].sort());
      const byId = await cri.listContainers({ filter: { id: runningB } });
      expect(byId.containers.map((c) => c.podSandboxId)).toEqual([b.id]);
      expect(byId.containers[0].metadata?.name).toBe('run');
      expect(byId.containers[0].imageRef).not.toBe('');

      const boxes = await cri.listPodSandbox({
        filter: { labelSelector: { [SUITE_LABEL]: run }, state: { state: PodSandboxState.SANDBOX_READY } },
      });
      expect(boxes.items.map((s) => s.id)).toEqual(expect.arrayContaining([a.id, b.id]));
      const one = await cri.listPodSandbox({ filter: { id: a.id } });
      expect(one.items.map((s) => s.id)).toEqual([a.id]);
    });

    it('answers ExecSync with exit codes and output', async () => {
      const sb = await runSandbox('exec');
      const id = await runContainer(sb, 'target', ['sleep', '3600']);
      const ok = await cri.execSync({ containerId: id, cmd: ['true'], timeout: 10n });
      expect(ok.exitCode).toBe(0);
      const fail = await cri.execSync({ containerId: id, cmd: ['false'], timeout: 10n });
      expect(fail.exitCode).toBe(1);
      const seven = await cri.execSync({ containerId: id, cmd: ['sh', '-c', 'exit 7'], timeout: 10n });
      expect(seven.exitCode).toBe(7);
      const echo = await cri.execSync({ containerId: id, cmd: ['echo', 'probe-ok'], timeout: 10n });
      expect(Buffer.from(echo.stdout).toString()).toBe('probe-ok\n');
      const missing = await cri.execSync({ containerId: id, cmd: ['cat', '/no/such/file'], timeout: 10n });
      expect(missing.exitCode).toBe(1);
      expect(Buffer.from(missing.stderr).toString()).toContain('No such file or directory');
    });

    it('removes a sandbox together with its containers', async () => {
      const sb = await runSandbox('cascade');
      const id = await runContainer(sb, 'child', ['sleep', '3600']);
      await cri.stopPodSandbox({ podSandboxId: sb.id });
      await cri.removePodSandbox({ podSandboxId: sb.id });
      const left = await cri.listContainers({ filter: { podSandboxId: sb.id } });
      expect(left.containers).toEqual([]);
      await expect(cri.containerStatus({ containerId: id })).rejects.toBeInstanceOf(CriNotFoundError);
    });

    it('returns NotFound for unknown ids', async () => {
      const unknown = 'f'.repeat(64);
      await expect(cri.containerStatus({ containerId: unknown })).rejects.toBeInstanceOf(CriNotFoundError);
      await expect(cri.startContainer({ containerId: unknown })).rejects.toBeInstanceOf(CriNotFoundError);
    });

    it('reports image status and fails to pull an unreachable image', async () => {
      const present = await cri.imageStatus({ image: { image: BUSYBOX_IMAGE } });
      expect(present.image?.id).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(present.image?.repoTags).toContain(BUSYBOX_IMAGE);
      const absent = await cri.imageStatus({ image: { image: UNREACHABLE_IMAGE } });
      expect(absent.image).toBeUndefined();
      const err = await cri.pullImage({ image: { image: UNREACHABLE_IMAGE } }, { timeoutMs: 90_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CriError);
      expect((err as CriError).operation).toBe('pull_image');
      expect((err as CriError).message).toContain(UNREACHABLE_IMAGE);
    });
  });
}
