/**
 * Driver-neutral cgroup names (upstream pkg/kubelet/cm cgroup_manager_linux.go
 * CgroupName, NewCgroupName, ToCgroupfs, ToSystemd). A name is the list of
 * its components from the root: `['kubepods', 'burstable', 'pod<uid>']`.
 * Pure.
 */
import { KubeletTsError } from '../../common/errors.js';
import type { CgroupDriver } from '../config/kubelet-config.js';

export type CgroupName = readonly string[];

/** A bad cgroup name component or cgroupRoot. */
export class CgroupNameError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CGROUP_NAME';
}

/** Upstream NewCgroupName: `base` with `components` appended; a component may not contain '/'. */
export function childCgroupName(base: CgroupName, ...components: string[]): CgroupName {
  for (const c of components) {
    if (c === '' || c.includes('/')) throw new CgroupNameError(`invalid cgroup name component ${JSON.stringify(c)}`);
  }
  return [...base, ...components];
}

/**
 * Upstream ParseCgroupfsToCgroupName: a cgroupfs path (`/a/b`) as a name.
 * cgroupRoot is always given in this form, whatever the driver.
 */
export function parseCgroupfsName(path: string): CgroupName {
  return path.split('/').filter((c) => c !== '');
}

const SYSTEMD_SUFFIX = '.slice';

/** Upstream ToCgroupfs: `/kubepods/burstable/pod<uid>`; the root is `/`. */
export function toCgroupfs(name: CgroupName): string {
  return '/' + name.join('/');
}

/**
 * Upstream ToSystemd (systemd ExpandSlice of the escaped, dash-joined name):
 * ['kubepods', 'burstable', 'pod1-2'] →
 * `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice`.
 * Dashes inside a component become '_' (escapeSystemdCgroupName).
 */
export function toSystemd(name: CgroupName): string {
  if (name.length === 0) return '/';
  const escaped = name.map((c) => c.replaceAll('-', '_'));
  let path = '';
  for (let i = 1; i <= escaped.length; i++) path += `/${escaped.slice(0, i).join('-')}${SYSTEMD_SUFFIX}`;
  return path;
}

/** The driver's literal form of a name (upstream cgroupManager.Name): what the runtime gets as cgroup_parent. */
export function driverName(driver: CgroupDriver, name: CgroupName): string {
  return driver === 'systemd' ? toSystemd(name) : toCgroupfs(name);
}
