import { mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import { collectDownwardAPIData, downwardAPIPlugin } from '../../src/main/volumes/downward-api-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const pod: Pod = {
  metadata: { uid: 'u-1', name: 'web', namespace: 'prod', labels: { b: '2', a: '1' }, annotations: { note: 'x"y' } },
  spec: { containers: [{ name: 'app', image: 'i', resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } } }] },
};
const host = { nodeAllocatable: { cpu: '4', memory: '8Gi' } };
const text = (items: Parameters<typeof collectDownwardAPIData>[1]) =>
  Object.fromEntries([...collectDownwardAPIData(pod, items, 0o644, host)].map(([k, v]) => [k, v.data.toString()]));

describe('downwardAPI volume data (upstream CollectData)', () => {
  it.each([
    ['metadata.name', 'web'],
    ['metadata.namespace', 'prod'],
    ['metadata.uid', 'u-1'],
    ['metadata.labels', 'a="1"\nb="2"'],
    ['metadata.annotations', 'note="x\\"y"'],
    ["metadata.labels['b']", '2'],
    ["metadata.annotations['missing']", ''],
  ])('fieldRef %s', (fieldPath, want) => {
    expect(text([{ path: 'f', fieldRef: { fieldPath } }])).toEqual({ f: want });
  });

  it.each([
    [{ containerName: 'app', resource: 'limits.cpu', divisor: '1m' }, '500'],
    [{ containerName: 'app', resource: 'limits.memory', divisor: '1Mi' }, '128'],
    [{ containerName: 'app', resource: 'requests.cpu' }, '1'],
  ])('resourceFieldRef %j', (ref, want) => {
    expect(text([{ path: 'r', resourceFieldRef: ref }])).toEqual({ r: want });
  });

  it('reports every bad item together', () => {
    expect(() =>
      text([
        { path: 'a', fieldRef: { fieldPath: 'status.podIP' } },
        { path: 'b', resourceFieldRef: { containerName: 'nope', resource: 'limits.cpu' } },
      ]),
    ).toThrow('[unsupported fieldPath: status.podIP, container "nope" not found]');
  });

  it('item modes override the default mode; setUp writes read-only files on a tmpfs, atomically', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kts-dapi-'));
    try {
      const mounter = new FakeMounter();
      const got = await downwardAPIPlugin.setUp(
        pod,
        {
          name: 'info',
          downwardAPI: {
            defaultMode: 0o600,
            items: [
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'ns', mode: 0o444, fieldRef: { fieldPath: 'metadata.namespace' } },
            ],
          },
        },
        { rootDir: root, mounter, clock: new FakeClock(), logger: silentLogger(), nodeAllocatable: host.nodeAllocatable },
      );
      const dir = join(root, 'pods/u-1/volumes/kubernetes.io~downward-api/info');
      expect(got).toEqual({ path: dir, readOnly: true });
      expect(mounter.mounts.map((m) => [m.mountPoint, m.fsType])).toEqual([[dir, 'tmpfs']]);
      expect(await readlink(join(dir, 'name'))).toBe('..data/name');
      expect(await readFile(join(dir, 'name'), 'utf8')).toBe('web');
      expect((await stat(join(dir, 'name'))).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'ns'))).mode & 0o777).toBe(0o444);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
