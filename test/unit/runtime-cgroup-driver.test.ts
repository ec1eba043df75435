import { describe, expect, it } from 'vitest';
import { runtimeCgroupDriver } from '../../src/main/cgroups/runtime-cgroup-driver.js';

const info = (runc: unknown, name = 'runc') => ({
  config: JSON.stringify({ containerd: { defaultRuntimeName: name, runtimes: { runc } } }),
});

describe('runtimeCgroupDriver (containerd verbose CRI Status)', () => {
  it.each<[string, Record<string, string> | undefined, string | undefined]>([
    ['SystemdCgroup false', info({ options: { SystemdCgroup: false } }), 'cgroupfs'],
    ['SystemdCgroup true', info({ options: { SystemdCgroup: true } }), 'systemd'],
    ['no options (another runtime type)', info({ options: null }), undefined],
    ['a default runtime not in the list', info({ options: { SystemdCgroup: true } }, 'kata'), undefined],
    ['no config', {}, undefined],
    ['no info', undefined, undefined],
    ['not JSON', { config: '{' }, undefined],
  ])('%s: %s', (_, i, driver) => {
    expect(runtimeCgroupDriver(i)).toBe(driver);
  });
});
