import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { CriError } from '../../src/common/errors.js';
import { CriClient } from '../../src/cri/client.js';
import {
  Container,
  ContainerState,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandboxState,
} from '../../src/gen/runtime/v1/api.js';
import { RuntimeServiceService } from '../../src/cri/grpc-service.js';
import { CriRuntime } from '../../src/runtime/cri-runtime.js';
import type { OperationType } from '../../src/cri/operations.js';

/**
 * CriRuntime.getPods over a real gRPC channel whose server answers the two
 * list calls with raw bytes: the partial decode end to end, and a malformed
 * response failing the call as a CriError (as any CRI error fails a relist).
 */
describe('CriRuntime.getPods over raw list responses', () => {
  let dir: string;
  let server: grpc.Server;
  let cri: CriClient;
  const observed: [OperationType, boolean][] = [];
  const responses = { sandboxes: Buffer.alloc(0), containers: Buffer.alloc(0) };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-cri-list-'));
    const raw = (b: Buffer) => b;
    const service = {
      listPodSandbox: { ...RuntimeServiceService.listPodSandbox, responseSerialize: raw },
      listContainers: { ...RuntimeServiceService.listContainers, responseSerialize: raw },
    } as unknown as grpc.ServiceDefinition;
    server = new grpc.Server();
    server.addService(service, {
      listPodSandbox: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, responses.sandboxes),
      listContainers: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, responses.containers),
    });
    const socket = join(dir, 'cri.sock');
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    cri = new CriClient({ runtimeEndpoint: `unix://${socket}`, timeoutMs: 10_000, observer: (op, _s, err) => observed.push([op, !err]) });
  });

  afterAll(async () => {
    cri?.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const uid = 'uid-1';
  const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'ns' };

  it('groups the partially decoded lists by pod, newest sandbox first', async () => {
    responses.sandboxes = Buffer.from(
      ListPodSandboxResponse.encode({
        items: [
          { id: 's-old', state: PodSandboxState.SANDBOX_NOTREADY, createdAt: 1n, labels, annotations: { x: 'y' }, runtimeHandler: '' },
          { id: 's-new', state: PodSandboxState.SANDBOX_READY, createdAt: 2n, labels, annotations: {}, runtimeHandler: '' },
          { id: 'foreign', state: PodSandboxState.SANDBOX_READY, createdAt: 3n, labels: {}, annotations: {}, runtimeHandler: '' },
        ],
      }).finish(),
    );
    responses.containers = Buffer.from(
      ListContainersResponse.encode({
        containers: [
          Container.fromPartial({
            id: 'c1',
            podSandboxId: 's-new',
            metadata: { name: 'app' },
            state: ContainerState.CONTAINER_EXITED,
            createdAt: 5n,
            labels,
            annotations: { 'io.kubernetes.container.hash': 'abc' },
          }),
          Container.fromPartial({
            id: 'c2',
            podSandboxId: 's-new',
            state: ContainerState.CONTAINER_RUNNING,
            labels: { ...labels, 'io.kubernetes.container.name': 'side' },
          }),
        ],
      }).finish(),
    );
    const pods = await new CriRuntime(cri, realClock).getPods();
    expect(pods).toEqual([
      {
        uid,
        name: 'web',
        namespace: 'ns',
        sandboxes: [
          { id: 's-new', state: 'ready', createdAt: 2n },
          { id: 's-old', state: 'notready', createdAt: 1n },
        ],
        containers: [
          { id: 'c1', name: 'app', state: 'exited', hash: 'abc', createdAt: 5n, sandboxId: 's-new' },
          { id: 'c2', name: 'side', state: 'running', hash: '', createdAt: 0n, sandboxId: 's-new' },
        ],
      },
    ]);
  });

  it('a malformed list response fails the call with a CriError (INTERNAL) naming the problem, and is counted as an error', async () => {
    responses.sandboxes = Buffer.from(ListPodSandboxResponse.encode({ items: [] }).finish());
    responses.containers = Buffer.from([0x0a, 0x05, 0x0a, 0x01]);
    observed.length = 0;
    const err = await new CriRuntime(cri, realClock).getPods().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CriError);
    expect(err).toMatchObject({ operation: 'list_containers', grpcCode: grpc.status.INTERNAL });
    expect((err as Error).message).toBe(
      'list_containers: rpc error: code = INTERNAL desc = ListContainersResponse: malformed response at byte 1 of 4: length 5 runs past the end of its message (2 bytes left)',
    );
    expect(observed).toContainEqual(['list_containers', false]);
    expect(observed).toContainEqual(['list_podsandbox', true]);
  });
});
