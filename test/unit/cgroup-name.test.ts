import { describe, expect, it } from 'vitest';
import {
  CgroupNameError,
  childCgroupName,
  driverName,
  parseCgroupfsName,
  toCgroupfs,
  toSystemd,
} from '../../src/main/cgroups/cgroup-name.js';

describe('cgroup names (upstream CgroupName)', () => {
  it.each<[string[], string, string]>([
    [[], '/', '/'],
    [['kubepods'], '/kubepods', '/kubepods.slice'],
    [['kubepods', 'burstable'], '/kubepods/burstable', '/kubepods.slice/kubepods-burstable.slice'],
    [
      ['kubepods', 'burstable', 'pod1234-abcd-5678'],
      '/kubepods/burstable/pod1234-abcd-5678',
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678.slice',
    ],
    [['kts-e2e', 'kubepods', 'podx'], '/kts-e2e/kubepods/podx', '/kts_e2e.slice/kts_e2e-kubepods.slice/kts_e2e-kubepods-podx.slice'],
  ])('%j is %s (cgroupfs) and %s (systemd)', (name, cgroupfs, systemd) => {
    expect(toCgroupfs(name)).toBe(cgroupfs);
    expect(toSystemd(name)).toBe(systemd);
    expect(driverName('cgroupfs', name)).toBe(cgroupfs);
    expect(driverName('systemd', name)).toBe(systemd);
    expect(parseCgroupfsName(cgroupfs)).toEqual(name);
  });

  it.each<[string, string[]]>([
    ['', []],
    ['/', []],
    ['/a//b/', ['a', 'b']],
  ])('cgroupRoot %j (a cgroupfs path for either driver) is %j', (root, name) => {
    expect(parseCgroupfsName(root)).toEqual(name);
  });

  it.each(['', 'a/b'])('refuses the component %j', (c) => {
    expect(() => childCgroupName(['kubepods'], c)).toThrow(CgroupNameError);
  });

  it('appends components', () => {
    expect(childCgroupName(['r'], 'kubepods', 'besteffort')).toEqual(['r', 'kubepods', 'besteffort']);
  });
});
