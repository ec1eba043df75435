/**
 * The upstream kubelet release whose behaviour kubelet-ts is compared with and
 * reports as its kubeletVersion. Probe and lifecycle requests name its
 * major.minor in their User-Agent (kube-probe/1.20), as that kubelet does.
 */
export const UPSTREAM_COMPAT_VERSION = 'v1.20.2';

/** "1.20" of "v1.20.2". */
export const UPSTREAM_MAJOR_MINOR = UPSTREAM_COMPAT_VERSION.replace(/^v/, '').split('.').slice(0, 2).join('.');
