import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as api from '../../src/gen/runtime/v1/api.js';
import * as svc from '../../src/cri/grpc-service.js';
import { SimControlClient, SimControlError } from '../../src/sim/control-client.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { FakeClock } from '../fakes/fake-clock.js';

const { ContainerState: CS, PodSandboxState: PS, ContainerEventType: ET } = api;

type RS = typeof svc.RuntimeServiceService & typeof svc.ImageServiceService;
type Method = Exclude<keyof RS, 'getContainerEvents'>;
type Req<K extends Method> = Parameters<RS[K]['requestSerialize']>[0];
type Res<K extends Method> = ReturnType<RS[K]['responseDeserialize']>;
/** A generated client's unary method, called with metadata, options and a callback. */
type UnaryCall<R> = (
  req: unknown,
  md: grpc.Metadata,
  options: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: R) => void,
) => void;
interface Codec {
  fromPartial(o: unknown): unknown;
}

/** A promise client over the generated grpc-js clients; requests are built with fromPartial. */
class Cri {
  readonly rs: svc.RuntimeServiceClient;
  readonly is: svc.ImageServiceClient;
  constructor(endpoint: string) {
    const opts = { 'grpc.max_receive_message_length': 16 << 20, 'grpc.max_send_message_length': 16 << 20 };
    this.rs = new svc.RuntimeServiceClient(endpoint, grpc.credentials.createInsecure(), opts);
    this.is = new svc.ImageServiceClient(endpoint, grpc.credentials.createInsecure(), opts);
  }
  call<K extends Method>(m: K, req: api.DeepPartial<Req<K>> = {} as api.DeepPartial<Req<K>>): Promise<Res<K>> {
    const path =
      (svc.RuntimeServiceService as Record<string, { path: string }>)[m]?.path ??
      (svc.ImageServiceService as Record<string, { path: string }>)[m].path;
    const codec = (api as unknown as Record<string, Codec>)[`${path.split('/').pop()}Request`];
    const client = m in svc.RuntimeServiceService ? this.rs : this.is;
    return new Promise((resolve, reject) =>
      (client as unknown as Record<string, UnaryCall<Res<K>>>)[m](
        codec.fromPartial(req),
        new grpc.Metadata(),
        { deadline: Date.now() + 20_000 },
        (err: grpc.ServiceError | null, res: Res<K>) => (err ? reject(err) : resolve(res)),
      ),
    );
  }
  close(): void {
    this.rs.close();
    this.is.close();
  }
}

async function waitFor<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, what: string, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end)
      throw new Error(
        `timed out waiting for ${what}; last: ${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x))}`,
      );
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function rejects(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('expected the call to fail');
}

const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
let seq = 0;

function sandboxConfig(over: api.DeepPartial<api.PodSandboxConfig> = {}): api.DeepPartial<api.PodSandboxConfig> {
  const n = ++seq;
  return {
    metadata: { name: `pod-${n}`, namespace: 'default', uid: `uid-${n}`, attempt: 0 },
    labels: { 'io.kubernetes.pod.name': `pod-${n}`, app: 'test' },
    annotations: { note: `n${n}` },
    ...over,
  };
}

describe('kubelet-ts-sim over gRPC', () => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let cri: Cri;
  let logDir: string;

  const runPod = async (over: api.DeepPartial<api.PodSandboxConfig> = {}) => {
    const config = sandboxConfig({ logDirectory: logDir, ...over });
    const { podSandboxId } = await cri.call('runPodSandbox', { config });
    return { id: podSandboxId, config };
  };
  const runContainer = async (sandboxId: string, command: string[], over: api.DeepPartial<api.ContainerConfig> = {}, start = true) => {
    const name = `c${++seq}`;
    const { containerId } = await cri.call('createContainer', {
      podSandboxId: sandboxId,
      config: {
        metadata: { name, attempt: 0 },
        image: { image: BUSYBOX },
        command,
        logPath: `${name}/0.log`,
        labels: { 'io.kubernetes.container.name': name },
        ...over,
      },
    });
    if (start) await cri.call('startContainer', { containerId });
    return { id: containerId, name, log: join(logDir, name, '0.log') };
  };
  const status = async (id: string) => (await cri.call('containerStatus', { containerId: id })).status!;
  const waitExited = (id: string) =>
    waitFor(
      () => status(id),
      (s) => s.state === CS.CONTAINER_EXITED,
      `container ${id} to exit`,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-'));
    logDir = join(dir, 'logs');
    sim = await startSimRuntime({
      listen: `unix://${join(dir, 'cri.sock')}`,
      controlListen: `unix://${join(dir, 'ctl.sock')}`,
      allowImages: ['docker.io/library/nginx:*'],
      seed: 42,
    });
    cri = new Cri(sim.endpoint);
  });

  afterAll(async () => {
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers Version and Status', async () => {
    expect(await cri.call('version', { version: 'v1' })).toMatchObject({ runtimeName: 'kubelet-ts-sim', runtimeApiVersion: 'v1' });
    const st = await cri.call('status', {});
    expect(st.status!.conditions.map((c) => [c.type, c.status])).toEqual([
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ]);
  });

  describe('sandboxes', () => {
    it('runs a sandbox with a pod IP and round-trips its config', async () => {
      const { id, config } = await runPod();
      expect(id).toMatch(/^[0-9a-f]{64}$/);
      const res = await cri.call('podSandboxStatus', { podSandboxId: id });
      expect(res.status).toMatchObject({
        id,
        state: PS.SANDBOX_READY,
        labels: config.labels,
        annotations: config.annotations,
        metadata: config.metadata,
      });
      expect(res.status!.network!.ip).toMatch(/^10\.244\.\d+\.\d+$/);
      expect(res.status!.createdAt).toBeGreaterThan(1_600_000_000_000_000_000n);
    });

    it('gives host-network sandboxes no IP', async () => {
      const { id } = await runPod({ linux: { securityContext: { namespaceOptions: { network: api.NamespaceMode.NODE } } } });
      const res = await cri.call('podSandboxStatus', { podSandboxId: id });
      expect(res.status!.network!.ip).toBe('');
    });

    it('refuses a second sandbox with the same name', async () => {
      const { config } = await runPod();
      const err = await rejects(cri.call('runPodSandbox', { config }));
      expect(err.code).toBe(grpc.status.UNKNOWN);
      expect(err.details).toMatch(/failed to reserve sandbox name/);
    });

    it('filters ListPodSandbox by id, id prefix, state and labels', async () => {
      const a = await runPod({ labels: { tier: 'a' } });
      const b = await runPod({ labels: { tier: 'b' } });
      await cri.call('stopPodSandbox', { podSandboxId: b.id });
      const ids = async (filter: api.DeepPartial<api.PodSandboxFilter>) =>
        (await cri.call('listPodSandbox', { filter })).items.map((s) => s.id);
      expect(await ids({ id: a.id })).toEqual([a.id]);
      expect(await ids({ id: a.id.slice(0, 12) })).toEqual([a.id]);
      expect(await ids({ labelSelector: { tier: 'b' } })).toEqual([b.id]);
      expect(await ids({ labelSelector: { tier: 'b' }, state: { state: PS.SANDBOX_READY } })).toEqual([]);
      expect(await ids({ state: { state: PS.SANDBOX_NOTREADY } })).toContain(b.id);
      expect(await ids({ id: 'f'.repeat(64) })).toEqual([]);
      const all = (await cri.call('listPodSandbox', {})).items;
      expect(all.find((s) => s.id === a.id)).toMatchObject({ state: PS.SANDBOX_READY, labels: { tier: 'a' } });
    });

    it('stop is idempotent, kills containers, and drops the IP; remove cascades', async () => {
      const { id } = await runPod();
      const c1 = await runContainer(id, ['sleep', '3600']);
      const c2 = await runContainer(id, ['sleep', '3600'], {}, false);
      await cri.call('stopPodSandbox', { podSandboxId: id });
      await cri.call('stopPodSandbox', { podSandboxId: id });
      const st = await cri.call('podSandboxStatus', { podSandboxId: id });
      expect(st.status).toMatchObject({ state: PS.SANDBOX_NOTREADY, network: { ip: '' } });
      expect(await status(c1.id)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 137, reason: 'Error' });
      expect((await status(c2.id)).state).toBe(CS.CONTAINER_CREATED);
      expect(st.containersStatuses.map((c) => c.id).sort()).toEqual([c1.id, c2.id].sort());

      await cri.call('removePodSandbox', { podSandboxId: id });
      await cri.call('removePodSandbox', { podSandboxId: id });
      const left = await cri.call('listContainers', { filter: { podSandboxId: id } });
      expect(left.containers).toEqual([]);
      const err = await rejects(cri.call('podSandboxStatus', { podSandboxId: id }));
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.details).toBe(`an error occurred when try to find sandbox "${id}": not found`);
    });

    it('StopPodSandbox of an unknown id is NotFound; RemovePodSandbox is not an error', async () => {
      const err = await rejects(cri.call('stopPodSandbox', { podSandboxId: 'nope' }));
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      await cri.call('removePodSandbox', { podSandboxId: 'nope' });
    });
  });

  describe('containers', () => {
    let pod: string;
    beforeAll(async () => {
      pod = (await runPod()).id;
    });

    it('creates, starts, lists and reports a container', async () => {
      const c = await runContainer(
        pod,
        ['sleep', '3600'],
        { labels: { role: 'web' }, annotations: { 'io.kubernetes.container.hash': 'abc' } },
        false,
      );
      expect((await status(c.id)).state).toBe(CS.CONTAINER_CREATED);
      await cri.call('startContainer', { containerId: c.id });
      const s = await status(c.id);
      expect(s).toMatchObject({
        id: c.id,
        state: CS.CONTAINER_RUNNING,
        metadata: { name: c.name, attempt: 0 },
        labels: { role: 'web' },
        annotations: { 'io.kubernetes.container.hash': 'abc' },
        logPath: c.log,
        image: { image: BUSYBOX },
        exitCode: 0,
        reason: '',
      });
      expect(s.imageRef).toMatch(/^docker\.io\/kubelet-ts\/busybox@sha256:[0-9a-f]{64}$/);
      expect(s.imageId).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(s.startedAt).toBeGreaterThan(s.createdAt);

      const listed = await cri.call('listContainers', { filter: { id: c.id.slice(0, 10) } });
      expect(listed.containers).toHaveLength(1);
      expect(listed.containers[0]).toMatchObject({
        id: c.id,
        podSandboxId: pod,
        state: CS.CONTAINER_RUNNING,
        imageRef: s.imageId,
        labels: { role: 'web' },
      });

      const err = await rejects(cri.call('startContainer', { containerId: c.id }));
      expect(err.code).toBe(grpc.status.UNKNOWN);
      expect(err.details).toBe(`failed to set starting state for container "${c.id}": container is in CONTAINER_RUNNING state`);
    });

    it('filters ListContainers by sandbox, state and labels', async () => {
      const other = (await runPod()).id;
      const a = await runContainer(other, ['sleep', '3600'], { labels: { sel: 'x' } });
      const b = await runContainer(other, ['true'], { labels: { sel: 'x' } });
      const c = await runContainer(other, ['sleep', '3600'], { labels: { sel: 'y' } }, false);
      await waitExited(b.id);
      const ids = async (filter: api.DeepPartial<api.ContainerFilter>) =>
        (await cri.call('listContainers', { filter })).containers.map((x) => x.id).sort();
      expect(await ids({ podSandboxId: other })).toEqual([a.id, b.id, c.id].sort());
      expect(await ids({ podSandboxId: other.slice(0, 8) })).toEqual([a.id, b.id, c.id].sort());
      expect(await ids({ podSandboxId: other, state: { state: CS.CONTAINER_RUNNING } })).toEqual([a.id]);
      expect(await ids({ podSandboxId: other, state: { state: CS.CONTAINER_EXITED } })).toEqual([b.id]);
      expect(await ids({ labelSelector: { sel: 'x' } })).toEqual([a.id, b.id].sort());
      expect(await ids({ labelSelector: { sel: 'x' }, state: { state: CS.CONTAINER_CREATED } })).toEqual([]);
      expect(await ids({ labelSelector: { sel: 'y' }, podSandboxId: other })).toEqual([c.id]);
    });

    it('reports NotFound like containerd', async () => {
      let err = await rejects(cri.call('containerStatus', { containerId: 'missing' }));
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.details).toBe('an error occurred when try to find container "missing": not found');
      err = await rejects(cri.call('stopContainer', { containerId: 'missing', timeout: 1n }));
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      err = await rejects(
        cri.call('createContainer', { podSandboxId: 'missing', config: { metadata: { name: 'x' }, image: { image: BUSYBOX } } }),
      );
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.details).toBe('failed to find sandbox id "missing": not found');
      err = await rejects(
        cri.call('createContainer', { podSandboxId: pod, config: { metadata: { name: 'x' }, image: { image: 'quay.io/none:1' } } }),
      );
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.details).toBe('failed to resolve image "quay.io/none:1": not found');
      await cri.call('removeContainer', { containerId: 'missing' });
    });

    it('refuses a duplicate container name until the first is removed', async () => {
      const c = await runContainer(pod, ['sleep', '3600'], {}, false);
      const again = () =>
        cri.call('createContainer', { podSandboxId: pod, config: { metadata: { name: c.name }, image: { image: BUSYBOX } } });
      const err = await rejects(again());
      expect(err.details).toMatch(/failed to reserve container name/);
      await cri.call('removeContainer', { containerId: c.id });
      const { containerId } = await again();
      expect(containerId).toMatch(/^[0-9a-f]{64}$/);
    });

    it('StopContainer: SIGTERM ends an untrapped process (143); a trapped exit uses its code; stopping again is a no-op', async () => {
      const c = await runContainer(pod, ['sleep', '3600']);
      await cri.call('stopContainer', { containerId: c.id, timeout: 30n });
      const s = await status(c.id);
      expect(s).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 143, reason: 'Error' });
      const trapped = await runContainer(pod, ['sh', '-c', 'trap "exit 0" TERM; sleep 3600']);
      await cri.call('stopContainer', { containerId: trapped.id, timeout: 30n });
      expect(await status(trapped.id)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 0, reason: 'Completed' });
      expect(s.finishedAt).toBeGreaterThan(s.startedAt);
      await cri.call('stopContainer', { containerId: c.id, timeout: 0n });
      expect((await status(c.id)).finishedAt).toBe(s.finishedAt);
    });

    it('RemoveContainer force-stops a running container', async () => {
      const c = await runContainer(pod, ['sleep', '3600']);
      await cri.call('removeContainer', { containerId: c.id });
      expect((await cri.call('listContainers', { filter: { id: c.id } })).containers).toEqual([]);
    });

    it('cannot start a container in a stopped sandbox, nor create one', async () => {
      const p = (await runPod()).id;
      const c = await runContainer(p, ['sleep', '1'], {}, false);
      await cri.call('stopPodSandbox', { podSandboxId: p });
      const err = await rejects(cri.call('startContainer', { containerId: c.id }));
      expect(err.details).toBe(`sandbox container "${p}" is not running`);
      const err2 = await rejects(
        cri.call('createContainer', { podSandboxId: p, config: { metadata: { name: 'late' }, image: { image: BUSYBOX } } }),
      );
      expect(err2.code).toBe(grpc.status.NOT_FOUND);
    });
  });

  describe('behaviour rules', () => {
    let pod: string;
    beforeAll(async () => {
      pod = (await runPod()).id;
    });

    it.each([
      [['true'], 0, 'Completed'],
      [['false'], 1, 'Error'],
      [['sh', '-c', 'exit 3'], 3, 'Error'],
      [['/bin/sleep', '0.05'], 0, 'Completed'],
    ])('%j exits %i (%s)', async (cmd, code, reason) => {
      const c = await runContainer(pod, cmd);
      const s = await waitExited(c.id);
      expect(s).toMatchObject({ exitCode: code, reason });
    });

    it('splits command and args and writes echo output to the CRI log', async () => {
      const c = await runContainer(pod, ['sh'], { args: ['-c', 'echo hello world; sleep 0.05; echo "second line"; exit 4'] });
      const s = await waitExited(c.id);
      expect(s.exitCode).toBe(4);
      await sim.control.flushLogs();
      const lines = readFileSync(c.log, 'utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z stdout F hello world$/);
      expect(lines[1]).toMatch(/ stdout F second line$/);
    });

    it('sleep N keeps running until N has passed', async () => {
      const c = await runContainer(pod, ['sleep', '0.3']);
      const t0 = Date.now();
      expect((await status(c.id)).state).toBe(CS.CONTAINER_RUNNING);
      await waitExited(c.id);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    });

    it('unknown commands run until stopped', async () => {
      const c = await runContainer(pod, ['nginx', '-g', 'daemon off;']);
      await new Promise((r) => setTimeout(r, 50));
      expect((await status(c.id)).state).toBe(CS.CONTAINER_RUNNING);
      await cri.call('stopContainer', { containerId: c.id, timeout: 0n });
      expect((await status(c.id)).exitCode).toBe(137);
    });

    it('writes no log when the sandbox has no log directory', async () => {
      const p = (await cri.call('runPodSandbox', { config: sandboxConfig() })).podSandboxId;
      const c = await runContainer(p, ['echo', 'x']);
      await waitExited(c.id);
      expect((await status(c.id)).logPath).toBe(`${c.name}/0.log`);
    });
  });

  describe('ExecSync', () => {
    let pod: string;
    let c: { id: string };
    beforeAll(async () => {
      pod = (await runPod()).id;
      c = await runContainer(pod, ['sleep', '3600']);
      sim.control.setFile(c.id, '/tmp/healthy', 'ok\n');
    });
    const exec = (cmd: string[], timeout = 5n) => cri.call('execSync', { containerId: c.id, cmd, timeout });
    const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

    it.each([
      [['true'], 0, '', ''],
      [['false'], 1, '', ''],
      [['sh', '-c', 'exit 7'], 7, '', ''],
      [['echo', 'hi', 'there'], 0, 'hi there\n', ''],
      [['cat', '/tmp/healthy'], 0, 'ok\n', ''],
      [['cat', '/tmp/missing'], 1, '', "cat: can't open '/tmp/missing': No such file or directory\n"],
    ])('%j → %i', async (cmd, code, stdout, stderr) => {
      const r = await exec(cmd);
      expect({ code: r.exitCode, out: text(r.stdout), err: text(r.stderr) }).toEqual({ code, out: stdout, err: stderr });
    });

    it('times out like containerd', async () => {
      const err = await rejects(exec(['sleep', '5'], 1n));
      expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(err.details).toBe('failed to exec in container: timeout 1s exceeded: context deadline exceeded');
    });

    it('fails on a container that is not running', async () => {
      const done = await runContainer(pod, ['true']);
      await waitExited(done.id);
      const err = await rejects(cri.call('execSync', { containerId: done.id, cmd: ['true'], timeout: 1n }));
      expect(err.code).toBe(grpc.status.UNKNOWN);
      expect(err.details).toBe('failed to exec in container: container is in CONTAINER_EXITED state');
    });
  });

  describe('images', () => {
    it('lists seeded images and resolves short names', async () => {
      const { images } = await cri.call('listImages', {});
      expect(images.flatMap((i) => i.repoTags)).toEqual(expect.arrayContaining([BUSYBOX, 'docker.io/kubelet-ts/pause:1.0']));
      const st = await cri.call('imageStatus', { image: { image: 'kubelet-ts/busybox:1.0' } });
      expect(st.image!.repoTags).toEqual([BUSYBOX]);
      expect(st.image!.size).toBeGreaterThan(0n);
      const byId = await cri.call('imageStatus', { image: { image: st.image!.id } });
      expect(byId.image!.id).toBe(st.image!.id);
    });

    it('ImageStatus of an unknown image is empty, not an error', async () => {
      const st = await cri.call('imageStatus', { image: { image: 'busybox' } });
      expect(st.image).toBeUndefined();
    });

    it('pulls allowed refs and fails others like containerd', async () => {
      const pulled = await cri.call('pullImage', { image: { image: 'nginx:1.25' } });
      expect(pulled.imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);
      const st = await cri.call('imageStatus', { image: { image: 'docker.io/library/nginx:1.25' } });
      expect(st.image!.id).toBe(pulled.imageRef);
      const err = await rejects(cri.call('pullImage', { image: { image: 'x:1' } }));
      expect(err.code).toBe(grpc.status.UNKNOWN);
      expect(err.details).toBe(
        'failed to pull and unpack image "docker.io/library/x:1": failed to resolve reference "docker.io/library/x:1": ' +
          'failed to do request: Head "https://registry-1.docker.io/v2/library/x/manifests/1": dial tcp: lookup registry-1.docker.io: no such host',
      );
    });

    it('removes images (idempotently) and reports image fs usage', async () => {
      await cri.call('pullImage', { image: { image: 'nginx:rm' } });
      await cri.call('removeImage', { image: { image: 'nginx:rm' } });
      await cri.call('removeImage', { image: { image: 'nginx:rm' } });
      expect((await cri.call('imageStatus', { image: { image: 'nginx:rm' } })).image).toBeUndefined();
      const fs = await cri.call('imageFsInfo', {});
      expect(fs.imageFilesystems[0].usedBytes!.value).toBeGreaterThan(0n);
      expect(fs.imageFilesystems[0].fsId!.mountpoint).toBe(dirname(sim.endpoint.slice('unix://'.length)));
    });
  });

  describe('stats', () => {
    it('reports plausible container and sandbox stats', async () => {
      const { id } = await runPod();
      const c = await runContainer(id, ['sleep', '3600'], { linux: { resources: { memoryLimitInBytes: 256n << 20n } } });
      const cs = (await cri.call('containerStats', { containerId: c.id })).stats!;
      expect(cs.attributes!.id).toBe(c.id);
      expect(cs.memory!.workingSetBytes!.value).toBeGreaterThan(1n << 20n);
      expect(cs.memory!.availableBytes!.value).toBeGreaterThan(0n);
      expect(cs.cpu!.usageNanoCores!.value).toBeGreaterThan(0n);
      const list = await cri.call('listContainerStats', { filter: { podSandboxId: id } });
      expect(list.stats.map((s) => s.attributes!.id)).toEqual([c.id]);
      const ps = await cri.call('listPodSandboxStats', { filter: { id } });
      expect(ps.stats).toHaveLength(1);
      expect(ps.stats[0].linux!.containers.map((s) => s.attributes!.id)).toEqual([c.id]);
      expect(ps.stats[0].linux!.process!.processCount!.value).toBe(2n);
      await cri.call('stopPodSandbox', { podSandboxId: id });
      const err = await rejects(cri.call('podSandboxStats', { podSandboxId: id }));
      expect(err.code).toBe(grpc.status.UNAVAILABLE);
    });
  });

  describe('faults', () => {
    it('fails every call with error rate 1.0, with the configured code', async () => {
      sim.control.setErrorRate('ListContainers', 1);
      let err = await rejects(cri.call('listContainers', {}));
      expect(err.code).toBe(grpc.status.UNAVAILABLE);
      sim.control.setErrorRate('ListContainers', 1, grpc.status.RESOURCE_EXHAUSTED, 'too busy');
      err = await rejects(cri.call('listContainers', {}));
      expect([err.code, err.details]).toEqual([grpc.status.RESOURCE_EXHAUSTED, 'too busy']);
      await cri.call('listPodSandbox', {});
      sim.control.setFaults({});
      await cri.call('listContainers', {});
      expect(sim.control.stats().injectedErrors.ListContainers).toBeGreaterThanOrEqual(2);
    });

    it('adds latency', async () => {
      sim.control.setLatency('Version', { kind: 'fixed', ms: 120 });
      const t0 = Date.now();
      await cri.call('version', {});
      expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
      sim.control.setLatency('Version', undefined);
    });

    it('runtime down: Status NotReady, everything else UNAVAILABLE, then recovery', async () => {
      sim.control.setRuntimeDown(true, 'ContainerdDown', 'containerd is restarting');
      const st = await cri.call('status', {});
      expect(st.status!.conditions[0]).toMatchObject({
        type: 'RuntimeReady',
        status: false,
        reason: 'ContainerdDown',
        message: 'containerd is restarting',
      });
      for (const p of [cri.call('listContainers', {}), cri.call('version', {}), cri.call('listImages', {})]) {
        expect((await rejects(p)).code).toBe(grpc.status.UNAVAILABLE);
      }
      sim.control.setRuntimeDown(false);
      expect((await cri.call('status', {})).status!.conditions[0].status).toBe(true);
      await cri.call('listContainers', {});
    });

    it('truncated lists: ListPodSandbox answers with part of what exists, then with all of it again', async () => {
      for (let i = 0; i < 3; i++) await cri.call('runPodSandbox', { config: sandboxConfig() });
      const all = (await cri.call('listPodSandbox', {})).items.length;
      expect(all).toBeGreaterThanOrEqual(3);
      sim.control.setFaults({ rpcs: { ListPodSandbox: { dropFraction: 1 } } });
      expect((await cri.call('listPodSandbox', {})).items).toEqual([]);
      expect((await cri.call('listContainers', {})).containers.length).toBe(sim.control.stats().containers.total);
      expect(sim.control.stats().droppedListItems.ListPodSandbox).toBe(all);
      sim.control.setFaults({});
      expect((await cri.call('listPodSandbox', {})).items.length).toBe(all);
    });

    it('network not ready shows in Status', async () => {
      sim.control.setNetworkReady(false);
      expect((await cri.call('status', {})).status!.conditions[1]).toMatchObject({ status: false, reason: 'NetworkPluginNotReady' });
      sim.control.setNetworkReady(true);
    });
  });

  describe('GetContainerEvents', () => {
    it('streams lifecycle events to every subscriber and cleans up on cancel', async () => {
      const streams = [cri.rs.getContainerEvents({}), cri.rs.getContainerEvents({})];
      const got: api.ContainerEventResponse[][] = [[], []];
      streams.forEach((s, i) => {
        s.on('data', (ev: api.ContainerEventResponse) => got[i].push(ev));
        s.on('error', () => {});
      });
      await waitFor(
        () => sim.control.stats().events.subscribers,
        (n) => n === 2,
        'two subscribers',
      );
      const { id: pod } = await runPod();
      const c = await runContainer(pod, ['sh', '-c', 'exit 2']);
      await waitExited(c.id);
      await cri.call('removeContainer', { containerId: c.id });
      const forC = (i: number) => got[i].filter((e) => e.containerId === c.id);
      for (const i of [0, 1]) {
        await waitFor(
          () => forC(i).length,
          (n) => n === 4,
          `four events on stream ${i}`,
        );
        expect(forC(i).map((e) => e.containerEventType)).toEqual([
          ET.CONTAINER_CREATED_EVENT,
          ET.CONTAINER_STARTED_EVENT,
          ET.CONTAINER_STOPPED_EVENT,
          ET.CONTAINER_DELETED_EVENT,
        ]);
      }
      const stopped = forC(0)[2];
      expect(stopped.podSandboxStatus!.id).toBe(pod);
      expect(stopped.containersStatuses.find((s) => s.id === c.id)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 2 });
      expect(forC(0)[3].containersStatuses.find((s) => s.id === c.id)).toBeUndefined();
      expect(got[0].filter((e) => e.containerId === pod).map((e) => e.containerEventType)).toEqual([
        ET.CONTAINER_CREATED_EVENT,
        ET.CONTAINER_STARTED_EVENT,
      ]);
      expect(forC(0)[1].createdAt).toBeGreaterThan(forC(0)[0].createdAt);

      streams[0].cancel();
      await waitFor(
        () => sim.control.stats().events.subscribers,
        (n) => n === 1,
        'one subscriber after cancel',
      );
      sim.control.setRuntimeDown(true);
      await waitFor(
        () => sim.control.stats().events.subscribers,
        (n) => n === 0,
        'streams closed on runtime down',
      );
      sim.control.setRuntimeDown(false);
    });
  });

  describe('control socket', () => {
    it('drives the sim from another process', async () => {
      const ctl = new SimControlClient(sim.controlEndpoint!);
      const before = await ctl.stats();
      expect(before.containers.total).toBeGreaterThan(0);
      const { id: pod } = await runPod();
      const c = await runContainer(pod, ['sleep', '3600']);
      await ctl.setFile(c.id, '/ready', 'yes');
      const r = await cri.call('execSync', { containerId: c.id, cmd: ['cat', '/ready'], timeout: 1n });
      expect(Buffer.from(r.stdout).toString()).toBe('yes');
      await ctl.killContainer(c.id, 139);
      expect(await status(c.id)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 139, reason: 'Error' });
      await expect(ctl.killContainer(c.id, 1)).rejects.toMatchObject({ status: 409 });
      await expect(ctl.killContainer('f'.repeat(64), 1)).rejects.toBeInstanceOf(SimControlError);
      await expect(ctl.setStopDelay(-1)).rejects.toMatchObject({ status: 400 });
      const mountpoint = (await cri.call('imageFsInfo', {})).imageFilesystems[0].fsId!.mountpoint;
      await ctl.setImageFsMountpoint('/mnt/small-imagefs');
      expect((await cri.call('imageFsInfo', {})).imageFilesystems[0].fsId!.mountpoint).toBe('/mnt/small-imagefs');
      await expect(ctl.setImageFsMountpoint('')).rejects.toMatchObject({ status: 400 });
      await ctl.setImageFsMountpoint(mountpoint);

      await ctl.setRuntimeDown(true, 'Maintenance');
      expect((await cri.call('status', {})).status!.conditions[0]).toMatchObject({ status: false, reason: 'Maintenance' });
      await ctl.setRuntimeDown(false);
      await ctl.setFaults({ rpcs: { ListPodSandbox: { errorRate: 1, errorCode: grpc.status.INTERNAL } } });
      expect((await rejects(cri.call('listPodSandbox', {}))).code).toBe(grpc.status.INTERNAL);
      expect((await ctl.getFaults()).rpcs!.ListPodSandbox.errorRate).toBe(1);
      await ctl.setFaults({});
      await ctl.allowImages(['quay.io/*']);
      await cri.call('pullImage', { image: { image: 'quay.io/app:1' } });
      await ctl.seedImages(['registry.k8s.io/pause:3.9']);
      expect((await cri.call('imageStatus', { image: { image: 'registry.k8s.io/pause:3.9' } })).image).toBeDefined();
      const after = await ctl.stats();
      expect(after.calls.ExecSync).toBeGreaterThan(0);
    });
  });
});

describe('kubelet-ts-sim on a fake clock', () => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let cri: Cri;
  const clock = new FakeClock();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-'));
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}`, clock, stopDelayMs: 10_000 });
    cri = new Cri(sim.endpoint);
  });
  afterAll(async () => {
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sleep N exits exactly when the clock passes N s; stop waits min(timeout, stop delay)', async () => {
    const { podSandboxId } = await cri.call('runPodSandbox', { config: sandboxConfig() });
    const mk = async (cmd: string[]) => {
      const { containerId } = await cri.call('createContainer', {
        podSandboxId,
        config: { metadata: { name: `f${++seq}` }, image: { image: BUSYBOX }, command: cmd },
      });
      await cri.call('startContainer', { containerId });
      return containerId;
    };
    const st = async (id: string) => (await cri.call('containerStatus', { containerId: id })).status!;
    const sleeper = await mk(['sleep', '5']);
    clock.step(4999);
    expect((await st(sleeper)).state).toBe(CS.CONTAINER_RUNNING);
    clock.step(1);
    expect(await st(sleeper)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 0, reason: 'Completed' });

    const server = await mk(['sleep', 'infinity']);
    const stopping = cri.call('stopContainer', { containerId: server, timeout: 3n });
    await waitFor(
      () => clock.pendingTimers(),
      (n) => n > 0,
      'the stop timer',
    );
    clock.step(2999);
    expect((await st(server)).state).toBe(CS.CONTAINER_RUNNING);
    clock.step(1);
    await stopping;
    expect(await st(server)).toMatchObject({ state: CS.CONTAINER_EXITED, exitCode: 137 });
  });
});
