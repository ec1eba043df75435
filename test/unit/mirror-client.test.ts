import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/cluster.js';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RestClient } from '../../src/main/apiserver/rest-client.js';
import { MirrorClient } from '../../src/main/kubelet/mirror-client.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../src/main/podconfig/types.js';

const NODE: Node = { metadata: { name: 'node1', uid: 'node-uid' } };

const staticPod = (hash = 'h1'): Pod => ({
  metadata: {
    name: 'web-node1',
    namespace: 'kube-system',
    uid: 'static-uid',
    labels: { app: 'web' },
    annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file', [CONFIG_HASH_ANNOTATION]: hash },
  },
  spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
  status: { phase: 'Running' },
});

const mirrorPod = (hash = 'h1', extra: Partial<Pod['metadata']> = {}): Pod =>
  ({
    metadata: {
      name: 'web-node1',
      namespace: 'kube-system',
      uid: 'mirror-uid',
      annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api', [CONFIG_HASH_ANNOTATION]: hash, [CONFIG_MIRROR_ANNOTATION]: hash },
      ...extra,
    },
    spec: {},
  }) as Pod;

const notFound = () => new ApiStatusError('not found', 404, 'NotFound');
const conflict = () => new ApiStatusError('Precondition failed: UID in precondition', 409, 'Conflict');
const exists = () => new ApiStatusError('already exists', 409, 'AlreadyExists');
const internal = () => new ApiStatusError('etcdserver: timeout', 500, 'InternalError');

type Call = { verb: 'create' | 'get' | 'delete'; path: string; body?: unknown };

/** create/get/delete record their calls and answer from per-verb queues (default: success). */
function fakeApi(o: { create?: Error[]; delete?: Error[]; existing?: Pod } = {}) {
  const calls: Call[] = [];
  const client = {
    create: async <T>(path: string, body: unknown) => {
      calls.push({ verb: 'create', path, body: structuredClone(body) });
      const err = o.create?.shift();
      if (err) throw err;
      return body as T;
    },
    get: async <T>(path: string) => {
      calls.push({ verb: 'get', path });
      if (!o.existing) throw notFound();
      return structuredClone(o.existing) as T;
    },
    delete: async <T>(path: string, body?: unknown) => {
      calls.push({ verb: 'delete', path, body });
      const err = o.delete?.shift();
      if (err) throw err;
      return {} as T;
    },
  };
  return { client: client as unknown as RestClient, calls };
}

const newClient = (api: ReturnType<typeof fakeApi>, node: () => Node | undefined = () => NODE) =>
  new MirrorClient({ client: api.client, nodeName: 'node1', node, logger: silentLogger() });

describe('MirrorClient.create', () => {
  it('posts a copy of the static pod with config.mirror = config.hash and the Node as controller owner', async () => {
    const api = fakeApi();
    await newClient(api).create(staticPod('abc'));
    expect(api.calls).toEqual([
      {
        verb: 'create',
        path: '/api/v1/namespaces/kube-system/pods',
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: 'web-node1',
            namespace: 'kube-system',
            labels: { app: 'web' },
            annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file', [CONFIG_HASH_ANNOTATION]: 'abc', [CONFIG_MIRROR_ANNOTATION]: 'abc' },
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'node-uid', controller: true }],
          },
          spec: staticPod().spec,
        },
      },
    ]);
  });

  it('does not change the static pod it copies', async () => {
    const pod = staticPod();
    const before = structuredClone(pod);
    await newClient(fakeApi()).create(pod);
    expect(pod).toEqual(before);
  });

  it.each([
    { name: 'an existing mirror with the same hash is success', existing: mirrorPod('h1'), ok: true },
    { name: 'an existing mirror with another hash fails', existing: mirrorPod('old'), ok: false },
    { name: 'an existing ordinary pod of that name fails', existing: { metadata: { name: 'web-node1' }, spec: {} } as Pod, ok: false },
  ])('AlreadyExists: $name', async ({ existing, ok }) => {
    const api = fakeApi({ create: [exists()], existing });
    const done = newClient(api).create(staticPod('h1'));
    if (ok) await expect(done).resolves.toBeUndefined();
    else await expect(done).rejects.toMatchObject({ status: 409, reason: 'AlreadyExists' });
    expect(api.calls.map((c) => `${c.verb} ${c.path}`)).toEqual([
      'create /api/v1/namespaces/kube-system/pods',
      'get /api/v1/namespaces/kube-system/pods/web-node1',
    ]);
  });

  it('other errors reach the caller (the pod worker retries)', async () => {
    await expect(newClient(fakeApi({ create: [internal()] })).create(staticPod())).rejects.toMatchObject({ status: 500 });
  });
});

describe('MirrorClient.delete', () => {
  it.each([
    {
      name: 'with a UID precondition',
      uid: 'm1',
      err: undefined,
      result: true,
      body: { gracePeriodSeconds: 0, preconditions: { uid: 'm1' } },
    },
    { name: 'without a UID', uid: undefined, err: undefined, result: true, body: { gracePeriodSeconds: 0 } },
    {
      name: 'already gone (404)',
      uid: 'm1',
      err: notFound(),
      result: false,
      body: { gracePeriodSeconds: 0, preconditions: { uid: 'm1' } },
    },
    { name: 'another UID (409)', uid: 'm1', err: conflict(), result: false, body: { gracePeriodSeconds: 0, preconditions: { uid: 'm1' } } },
  ])('$name → $result', async ({ uid, err, result, body }) => {
    const api = fakeApi({ delete: err ? [err] : [] });
    await expect(newClient(api).delete('kube-system', 'web-node1', uid)).resolves.toBe(result);
    expect(api.calls).toEqual([{ verb: 'delete', path: '/api/v1/namespaces/kube-system/pods/web-node1', body }]);
  });

  it('other errors reach the caller', async () => {
    await expect(newClient(fakeApi({ delete: [internal()] })).delete('ns', 'n', 'u')).rejects.toMatchObject({ status: 500 });
  });
});

// Kubelet.syncPod's mirror step: delete a mirror that is being deleted or no
// longer matches (IsMirrorPodOf), and create one when there is none, or when the
// outdated one was deleted, unless the Node is unknown or being deleted.
describe('MirrorClient.sync', () => {
  const DELETING = '2026-01-01T00:00:00Z';
  it.each<{ name: string; mirror?: Pod; node?: Node | null; deleteErr?: Error; calls: string[] }>([
    { name: 'no mirror: create it', calls: ['create'] },
    { name: 'no mirror, Node not known yet: nothing', node: null, calls: [] },
    {
      name: 'no mirror, Node being deleted: nothing',
      node: { metadata: { name: 'node1', uid: 'node-uid', deletionTimestamp: DELETING } },
      calls: [],
    },
    { name: 'a matching mirror: nothing', mirror: mirrorPod('h1'), calls: [] },
    {
      name: 'a mirror of another hash: delete it (its UID), then create',
      mirror: mirrorPod('old'),
      calls: ['delete mirror-uid', 'create'],
    },
    {
      name: 'a matching mirror being deleted: delete, then create',
      mirror: mirrorPod('h1', { deletionTimestamp: DELETING }),
      calls: ['delete mirror-uid', 'create'],
    },
    {
      name: 'an outdated mirror already gone: no create (the next sync sees no mirror)',
      mirror: mirrorPod('old'),
      deleteErr: notFound(),
      calls: ['delete mirror-uid'],
    },
    {
      name: 'an outdated mirror, Node being deleted: delete only',
      mirror: mirrorPod('old'),
      node: { metadata: { name: 'node1', uid: 'node-uid', deletionTimestamp: DELETING } },
      calls: ['delete mirror-uid'],
    },
  ])('$name', async ({ mirror, node, deleteErr, calls }) => {
    const api = fakeApi({ delete: deleteErr ? [deleteErr] : [] });
    const pm = new PodManager();
    const client = newClient(api, () => (node === null ? undefined : (node ?? NODE)));
    await client.sync(staticPod('h1'), mirror, (m, p) => pm.isMirrorPodOf(m, p));
    const seen = api.calls.map((c) =>
      c.verb === 'delete' ? `delete ${(c.body as { preconditions?: { uid?: string } }).preconditions?.uid}` : c.verb,
    );
    expect(seen).toEqual(calls);
    const created = api.calls.find((c) => c.verb === 'create')?.body as Pod | undefined;
    if (created) expect(created.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION]).toBe('h1');
  });
});
