/**
 * The pure parts of the CSI node side: version selection, CSINode and
 * node-ID annotation updates, the fsGroup rule, attachment names, the driver
 * registry's registration steps, and the plugin watcher's registration
 * protocol (fake registration connections over real socket files, a fake
 * clock for its backoff).
 */
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { PluginWatcher, type PluginHandler, type PluginInfo, type RegistrationConn } from '../../src/main/plugins/plugin-watcher.js';
import type { CsiNodeClient } from '../../src/main/volumes/csi/csi-client.js';
import { CsiDriverRegistry, highestSupportedVersion } from '../../src/main/volumes/csi/csi-drivers.js';
import { appliesFsGroup, attachmentName } from '../../src/main/volumes/csi-plugin.js';
import { nodeIdMap, withDriver, type NodeInfoManager } from '../../src/main/volumes/csi/node-info.js';
import { FakeClock } from '../fakes/fake-clock.js';

describe('highestSupportedVersion (upstream csi_plugin.go)', () => {
  it.each([
    [['1.0.0'], [1, 0, 0]],
    [
      ['0.3.0', '1.2.0', '1.0.0'],
      [1, 2, 0],
    ],
    [
      ['v1.5', '2.0.0'],
      [1, 5, 0],
    ],
  ])('%j -> %j', (versions, want) => expect(highestSupportedVersion(versions)).toEqual(want));

  it.each([
    [[], 'CSI driver reporting empty array for supported versions'],
    [['0.3.0'], 'highest supported version reported by driver is 0.3.0, must be v1.x'],
    [['2.0.0'], 'could not find a highest supported version from versions (2.0.0) reported by this driver: <nil>'],
    [['x'], 'could not find a highest supported version from versions (x) reported by this driver: could not parse "x" as a version'],
  ])('%j fails: %s', (versions, message) => expect(() => highestSupportedVersion(versions)).toThrow(message));
});

describe('CSINode drivers and the node-ID annotation', () => {
  const other = { name: 'other', nodeID: 'o', topologyKeys: null };
  it('adds a driver, with sorted topology keys and the attach limit', () => {
    expect(withDriver([other], 'd', 'n1', 16, { zone: 'a', rack: 'r' })).toEqual([
      other,
      { name: 'd', nodeID: 'n1', topologyKeys: ['rack', 'zone'], allocatable: { count: 16 } },
    ]);
  });
  it('replaces a driver whose node ID changed; leaves one that is current', () => {
    const current = { name: 'd', nodeID: 'n1', topologyKeys: [] };
    expect(withDriver([current, other], 'd', 'n1', 0, {})).toBeUndefined();
    expect(withDriver([current, other], 'd', 'n2', 0, {})).toEqual([other, { name: 'd', nodeID: 'n2', topologyKeys: [] }]);
  });
  it('sets and removes a driver in the annotation map; refuses an unreadable value', () => {
    expect(nodeIdMap(undefined, 'd', 'n1')).toEqual({ d: 'n1' });
    expect(nodeIdMap('{"a":"x","d":"n1"}', 'd', undefined)).toEqual({ a: 'x' });
    expect(() => nodeIdMap('{bad', 'd', 'n')).toThrow(/failed to parse node's "csi.volume.kubernetes.io\/nodeid" annotation value/);
  });
});

describe('appliesFsGroup (upstream supportsFSGroup)', () => {
  const pv = (fsType: string | undefined, accessModes?: string[]) => ({
    spec: { accessModes, csi: { driver: 'd', volumeHandle: 'h', fsType } },
  });
  it.each([
    ['ReadWriteOnceWithFSType', pv('ext4', ['ReadWriteOnce']), false, true, true],
    ['ReadWriteOnceWithFSType', pv(undefined, ['ReadWriteOnce']), false, true, false],
    ['ReadWriteOnceWithFSType', pv('ext4', ['ReadWriteMany']), false, true, false],
    ['ReadWriteOnceWithFSType', pv('ext4', ['ReadWriteOnce']), true, true, false],
    ['ReadWriteOnceWithFSType', pv('ext4', ['ReadWriteOnce']), false, false, false],
    ['File', pv(undefined, ['ReadWriteMany']), false, true, true],
    ['None', pv('ext4', ['ReadWriteOnce']), false, true, false],
  ])('policy %s, pv %j, readOnly %s, fsGroup %s -> %s', (policy, spec, readOnly, hasFsGroup, want) =>
    expect(appliesFsGroup(spec, readOnly, policy, hasFsGroup)).toBe(want),
  );
});

it('attachmentName is csi-<sha256 of handle, driver and node> (value from sha256sum)', () => {
  expect(attachmentName('vol-1', 'csi.example.com', 'node-a')).toBe('csi-664f93e6befe920d56b73708bbb3eb1888cad5fb3e7203b1b501f466d0bea90f');
});

function fakeClient(over: Partial<CsiNodeClient> = {}): CsiNodeClient {
  const no = () => Promise.reject(new Error('not expected'));
  return {
    nodeGetInfo: () => Promise.resolve({ nodeId: 'node-a', maxVolumesPerNode: 0, topology: {} }),
    nodeSupportsStageUnstage: () => Promise.resolve(true),
    nodeStageVolume: no,
    nodeUnstageVolume: no,
    nodePublishVolume: no,
    nodeUnpublishVolume: no,
    close: () => undefined,
    ...over,
  };
}

describe('CsiDriverRegistry', () => {
  const log: string[] = [];
  const nodeInfo: NodeInfoManager = {
    installDriver: (d, n) => (log.push(`install ${d} ${n}`), Promise.resolve()),
    uninstallDriver: (d) => (log.push(`uninstall ${d}`), Promise.resolve()),
  };
  beforeEach(() => (log.length = 0));

  it('registers after NodeGetInfo and the node info; refuses a second registration at the same version', async () => {
    const reg = new CsiDriverRegistry({ clients: () => fakeClient(), nodeInfo, logger: silentLogger() });
    expect(() => reg.client('d')).toThrow('driver name d not found in the list of registered CSI drivers');
    reg.validatePlugin('d', '/s', ['1.0.0']);
    await reg.registerPlugin('d', '/s', ['1.0.0']);
    expect(reg.names()).toEqual(['d']);
    expect(log).toEqual(['install d node-a']);
    expect(() => reg.validatePlugin('d', '/s', ['1.0.0'])).toThrow(
      'validation failed for CSI Driver d at endpoint /s: ValidatePlugin for CSI driver "d" failed. Another driver with the same name is already registered with a higher supported version: "1.0.0"',
    );
    await reg.deRegisterPlugin('d');
    expect(reg.names()).toEqual([]);
    expect(log).toEqual(['install d node-a', 'uninstall d']);
  });

  it('leaves a driver whose NodeGetInfo fails unregistered', async () => {
    const reg = new CsiDriverRegistry({
      clients: () => fakeClient({ nodeGetInfo: () => Promise.reject(new Error('rpc error: code = Unavailable desc = down')) }),
      nodeInfo,
      logger: silentLogger(),
    });
    await expect(reg.registerPlugin('d', '/s', ['1.0.0'])).rejects.toThrow('rpc error: code = Unavailable desc = down');
    expect(reg.names()).toEqual([]);
    expect(log).toEqual([]);
  });
});

describe('PluginWatcher', () => {
  let dir: string;
  const servers: Server[] = [];
  let clock: FakeClock;
  let infos: Record<string, PluginInfo | Error>;
  let events: string[];
  let registerFails: boolean;

  const handler: PluginHandler = {
    validatePlugin: (name, _e, versions) => {
      if (!versions.includes('1.0.0')) throw new Error(`bad versions of ${name}`);
    },
    registerPlugin: (name, endpoint) => {
      events.push(`register ${name} ${endpoint}`);
      return registerFails ? Promise.reject(new Error('apiserver down')) : Promise.resolve();
    },
    deRegisterPlugin: (name) => (events.push(`deregister ${name}`), Promise.resolve()),
  };
  const dial = (path: string): RegistrationConn => ({
    getInfo: () => {
      const info = infos[path];
      return info instanceof Error ? Promise.reject(info) : Promise.resolve(info);
    },
    notifyRegistrationStatus: (ok, error) => (events.push(`notify ${ok} ${error}`), Promise.resolve()),
    close: () => undefined,
  });
  const socket = async (name: string): Promise<string> => {
    const path = join(dir, name);
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return path;
  };
  const watcher = () => new PluginWatcher({ dir, handlers: { CSIPlugin: handler }, dial, clock, logger: silentLogger() });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-plugin-watcher-'));
    clock = new FakeClock();
    infos = {};
    events = [];
    registerFails = false;
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('registers a plugin (endpoint defaulting to its socket) and deregisters it when the socket goes', async () => {
    const path = await socket('a-reg.sock');
    infos[path] = { type: 'CSIPlugin', name: 'a', endpoint: '', supportedVersions: ['1.0.0'] };
    const w = watcher();
    await w.scanOnce();
    expect(events).toEqual([`register a ${path}`, 'notify true ']);
    expect(w.registered()).toEqual({ [path]: 'a' });
    await w.scanOnce();
    expect(events).toHaveLength(2);
    await unlink(path);
    await w.scanOnce();
    expect(events.at(-1)).toBe('deregister a');
    expect(w.registered()).toEqual({});
  });

  it('ignores dot-files and non-sockets; tells a plugin of an unknown type or bad versions why, and retries after backoff', async () => {
    await socket('.hidden.sock');
    const weird = await socket('w.sock');
    const bad = await socket('b.sock');
    infos[weird] = { type: 'DevicePlugin', name: 'w', endpoint: '', supportedVersions: ['v1beta1'] };
    infos[bad] = { type: 'CSIPlugin', name: 'b', endpoint: '/x', supportedVersions: ['0.3.0'] };
    const w = watcher();
    await w.scanOnce();
    expect(events.sort()).toEqual([
      `notify false RegisterPlugin error -- no handler registered for plugin type: DevicePlugin at socket ${weird}`,
      'notify false RegisterPlugin error -- plugin validation failed with err: bad versions of b',
    ]);
    await w.scanOnce();
    expect(events).toHaveLength(2); // within the 500 ms backoff
    clock.step(500);
    await w.scanOnce();
    expect(events).toHaveLength(4);
  });

  it('a failed RegisterPlugin is notified and not retried until the socket is created again', async () => {
    registerFails = true;
    const path = await socket('c.sock');
    infos[path] = { type: 'CSIPlugin', name: 'c', endpoint: '/csi.sock', supportedVersions: ['1.0.0'] };
    const w = watcher();
    await w.scanOnce();
    clock.step(600_000);
    await w.scanOnce();
    expect(events).toEqual([
      'register c /csi.sock',
      'notify false RegisterPlugin error -- plugin registration failed with err: apiserver down',
    ]);
    await new Promise((r) => servers.pop()!.close(r));
    registerFails = false;
    await socket('c.sock');
    await w.scanOnce();
    expect(events.slice(2)).toEqual(['register c /csi.sock', 'notify true ']);
  });

  it('a GetInfo failure is retried with backoff', async () => {
    const path = await socket('d.sock');
    infos[path] = new Error('rpc error: code = Unavailable desc = connection refused');
    const w = watcher();
    await w.scanOnce();
    expect(events).toEqual([]);
    infos[path] = { type: 'CSIPlugin', name: 'd', endpoint: '', supportedVersions: ['1.0.0'] };
    await w.scanOnce();
    expect(events).toEqual([]);
    clock.step(500);
    await w.scanOnce();
    expect(events).toEqual([`register d ${path}`, 'notify true ']);
  });
});
