/**
 * Wire compatibility checked from outside: a client generated at run time
 * from the UPSTREAM cri-api proto (not the project's) drives kubelet-ts-sim,
 * spawned as its own process, through a full sandbox and container lifecycle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '../helpers/poll.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const upstreamProto = join(root, 'test/fixtures/upstream-cri-api.proto');

/** The fields this test reads from each upstream response (proto-loader keepCase, longs and enums as strings). */
interface Responses {
  Version: { runtime_api_version: string };
  ImageStatus: { image: { repo_tags: string[] } };
  RunPodSandbox: { pod_sandbox_id: string };
  PodSandboxStatus: { status: { state: string; metadata: object; created_at: string } };
  CreateContainer: { container_id: string };
  StartContainer: object;
  ContainerStatus: {
    status: {
      state: string;
      metadata: object;
      annotations: Record<string, string>;
      created_at: string;
      started_at: string;
      exit_code: number;
    };
  };
  ListContainers: { containers: { id: string }[] };
  ExecSync: { exit_code: number };
  StopContainer: object;
  RemoveContainer: object;
  StopPodSandbox: object;
  RemovePodSandbox: object;
  ListPodSandbox: { items: unknown[] };
}
type Unary = (req: object, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
type ServiceClient = new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;

function call<M extends keyof Responses>(client: grpc.Client, method: M, req: object): Promise<Responses[M]> {
  const fn = (client as unknown as Record<string, Unary>)[method];
  return new Promise((ok, fail) => fn.call(client, req, (e, r) => (e ? fail(e) : ok(r as Responses[M]))));
}

describe('wire compatibility with the upstream cri-api proto', () => {
  let dir: string;
  let sim: ChildProcess;
  let runtime: grpc.Client;
  let image: grpc.Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-wire-'));
    const sock = join(dir, 'cri.sock');
    sim = spawn(process.execPath, [join(root, 'bin/kubelet-ts-sim.js'), '--listen', `unix://${sock}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await pollUntil('the simulator socket', () => existsSync(sock), { timeoutMs: 30_000 });
    const def = protoLoader.loadSync(upstreamProto, { keepCase: true, longs: String, enums: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      runtime: { v1: { RuntimeService: ServiceClient; ImageService: ServiceClient } };
    };
    runtime = new pkg.runtime.v1.RuntimeService(`unix://${sock}`, grpc.credentials.createInsecure());
    image = new pkg.runtime.v1.ImageService(`unix://${sock}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    runtime?.close();
    image?.close();
    if (sim && sim.exitCode === null) {
      const exited = new Promise((r) => sim.once('exit', r));
      sim.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('drives a full sandbox and container lifecycle', async () => {
    const version = await call(runtime, 'Version', { version: 'v1' });
    expect(version.runtime_api_version).toBe('v1');

    const img = await call(image, 'ImageStatus', { image: { image: 'docker.io/kubelet-ts/busybox:1.0' } });
    expect(img.image.repo_tags).toContain('docker.io/kubelet-ts/busybox:1.0');

    const sandboxConfig = {
      metadata: { name: 'wire', namespace: 'default', uid: 'wire-uid-1', attempt: 2 },
      log_directory: join(dir, 'logs'),
      labels: { 'io.kubernetes.pod.uid': 'wire-uid-1' },
      annotations: { a: 'b' },
    };
    const { pod_sandbox_id } = await call(runtime, 'RunPodSandbox', { config: sandboxConfig });
    expect(pod_sandbox_id).toMatch(/^[0-9a-f]{64}$/);
    const sb = await call(runtime, 'PodSandboxStatus', { pod_sandbox_id });
    expect(sb.status.state).toBe('SANDBOX_READY');
    expect(sb.status.metadata).toMatchObject({ name: 'wire', uid: 'wire-uid-1', attempt: 2 });
    expect(BigInt(sb.status.created_at)).toBeGreaterThan(1_600_000_000_000_000_000n);

    const { container_id } = await call(runtime, 'CreateContainer', {
      pod_sandbox_id,
      config: {
        metadata: { name: 'c', attempt: 1 },
        image: { image: 'docker.io/kubelet-ts/busybox:1.0' },
        command: ['sleep', '3600'],
        log_path: 'c/1.log',
        labels: { 'io.kubernetes.container.name': 'c' },
        annotations: { 'io.kubernetes.container.hash': 'abc' },
      },
      sandbox_config: sandboxConfig,
    });
    let st = await call(runtime, 'ContainerStatus', { container_id });
    expect(st.status.state).toBe('CONTAINER_CREATED');
    await call(runtime, 'StartContainer', { container_id });
    st = await call(runtime, 'ContainerStatus', { container_id });
    expect(st.status.state).toBe('CONTAINER_RUNNING');
    expect(st.status.metadata).toMatchObject({ name: 'c', attempt: 1 });
    expect(st.status.annotations['io.kubernetes.container.hash']).toBe('abc');
    expect(BigInt(st.status.started_at)).toBeGreaterThanOrEqual(BigInt(st.status.created_at));

    const list = await call(runtime, 'ListContainers', { filter: { pod_sandbox_id, state: { state: 'CONTAINER_RUNNING' } } });
    expect(list.containers.map((c) => c.id)).toEqual([container_id]);

    const exec = await call(runtime, 'ExecSync', { container_id, cmd: ['sh', '-c', 'exit 4'], timeout: 5 });
    expect(exec.exit_code).toBe(4);

    await call(runtime, 'StopContainer', { container_id, timeout: 0 });
    st = await call(runtime, 'ContainerStatus', { container_id });
    expect(st.status.state).toBe('CONTAINER_EXITED');
    expect(st.status.exit_code).toBe(137);
    await call(runtime, 'RemoveContainer', { container_id });
    await call(runtime, 'StopPodSandbox', { pod_sandbox_id });
    await call(runtime, 'RemovePodSandbox', { pod_sandbox_id });
    const left = await call(runtime, 'ListPodSandbox', { filter: { id: pod_sandbox_id } });
    expect(left.items).toEqual([]);
    await expect(call(runtime, 'ContainerStatus', { container_id })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});
