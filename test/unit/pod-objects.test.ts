import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { PodObjectsResolver } from '../../src/main/kubelet/pod-objects.js';
import type { ObjectRef, ObjectSource } from '../../src/main/volumes/volume-plugin.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function fakeObjects(store: Record<string, unknown>, failing = new Set<string>()) {
  const refs = new Map<string, number>();
  const key = (r: ObjectRef) => `${r.kind}/${r.namespace}/${r.name}`;
  const source = {
    register: (r: ObjectRef) => void refs.set(key(r), (refs.get(key(r)) ?? 0) + 1),
    unregister: (r: ObjectRef) => void refs.set(key(r), (refs.get(key(r)) ?? 0) - 1),
    onChange: () => undefined,
    get: async (r: ObjectRef) => {
      if (failing.has(key(r))) throw new Error('connection refused');
      const o = store[key(r)];
      if (!o) throw new ApiStatusError(`${r.kind}s "${r.name}" not found`, 404, 'NotFound');
      return o;
    },
  } as unknown as ObjectSource;
  return { source, refs };
}

const pod = (spec: Partial<Pod['spec']>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'registry.local/app:1' }], ...spec },
});

describe('PodObjectsResolver', () => {
  const store = {
    'secret/ns/db': { type: 'Opaque', data: { password: b64('pw') } },
    'configmap/ns/cfg': { data: { MODE: 'prod', 'bad key': 'x' }, binaryData: { BLOB: b64('bin') } },
    'secret/ns/pull': {
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'registry.local': { username: 'u', password: 'p' } } })) },
    },
    'secret/ns/broken': { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{nope') } },
  };

  it('resolves env objects (missing ones as null), pull credentials per image, and registers every reference once', async () => {
    const { source, refs } = fakeObjects(store);
    const events: string[] = [];
    const r = new PodObjectsResolver({ objects: source, recorder: { record: (_ref, type, reason) => events.push(`${type} ${reason}`) } });
    const p = pod({
      containers: [
        {
          name: 'app',
          image: 'registry.local/app:1',
          env: [
            { name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
            { name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'k', optional: true } } },
          ],
          envFrom: [{ configMapRef: { name: 'cfg' } }],
        },
        { name: 'side', image: 'busybox' },
      ],
      imagePullSecrets: [{ name: 'pull' }],
    });
    const out = await r.resolve(p);
    expect(out).toEqual({
      secrets: { db: { password: 'pw' }, absent: null },
      configMaps: { cfg: { MODE: 'prod', 'bad key': 'x', BLOB: 'bin' } },
      pullAuths: { 'registry.local/app:1': [{ username: 'u', password: 'p' }], busybox: [] },
    });
    expect(events).toEqual(['Warning InvalidEnvironmentVariableNames']);
    await r.resolve(p);
    expect(events).toHaveLength(1); // warned once per pod and source
    expect(refs.get('secret/ns/db')).toBe(1);
    r.forget('u1');
    expect([...refs.values()].every((n) => n === 0)).toBe(true);
  });

  it('a pull secret that is missing or malformed is skipped with FailedToRetrieveImagePullSecret', async () => {
    const { source } = fakeObjects(store);
    const events: string[] = [];
    const r = new PodObjectsResolver({
      objects: source,
      recorder: { record: (_ref, _t, reason, msg) => events.push(`${reason}: ${msg}`) },
    });
    const out = await r.resolve(pod({ imagePullSecrets: [{ name: 'missing' }, { name: 'broken' }, { name: 'pull' }] }));
    expect(out?.pullAuths['registry.local/app:1']).toHaveLength(1);
    expect(events).toEqual([expect.stringMatching(/^FailedToRetrieveImagePullSecret: .*\(missing, broken\)/)]);
  });

  it('a pod without references resolves to nothing; a read failure other than NotFound rejects (the sync retries)', async () => {
    const { source } = fakeObjects(store, new Set(['secret/ns/db']));
    const r = new PodObjectsResolver({ objects: source, recorder: { record: () => undefined } });
    expect(await r.resolve(pod({}))).toBeUndefined();
    await expect(r.resolve(pod({ containers: [{ name: 'a', envFrom: [{ secretRef: { name: 'db' } }] }] }))).rejects.toThrow(
      'connection refused',
    );
  });
});
