import { describe, expect, it } from 'vitest';
import { dirFailureCause } from '../../src/main/node/dir-failure-cause.js';

const of = dirFailureCause([
  { path: '/var/lib/kubelet', what: 'the root directory' },
  { path: '/var/log/pods', what: 'the pod log directory' },
  { path: '/var/lib/kubelet/logs', what: 'a nested directory' },
]);

describe('dirFailureCause', () => {
  it('names the errno and the node directory a failure is in', () => {
    expect(of(new Error('Failed to create pod sandbox: mkdir /var/log/pods/ns_p_uid: no space left on device (ENOSPC)'))).toBe(
      'no space left on device (ENOSPC) in the pod log directory /var/log/pods',
    );
    expect(of("EROFS: read-only file system, open '/var/lib/kubelet/pods/u/etc-hosts'")).toBe(
      'read-only file system (EROFS) in the root directory /var/lib/kubelet',
    );
  });

  it('reads the cause chain, and prefers the longest directory', () => {
    const inner = new Error("ENOSPC: no space left on device, open '/var/lib/kubelet/logs/x'");
    expect(of(new Error('Unable to attach or mount volumes', { cause: inner }))).toBe(
      'no space left on device (ENOSPC) in a nested directory /var/lib/kubelet/logs',
    );
  });

  it('is undefined for a pod’s own error, or an errno outside the node directories', () => {
    expect(of(new Error('failed to "StartContainer" for "c" with CreateContainerError: "boom"'))).toBeUndefined();
    expect(of(new Error("EACCES: permission denied, open '/srv/data/x'"))).toBeUndefined();
    expect(of(new Error('mkdir /var/lib/kubelet/pods/u: file exists (EEXIST)'))).toBeUndefined();
    // A path that only starts like a node directory is not in it.
    expect(of(new Error("ENOSPC: no space left on device, open '/var/lib/kubelet-other/x'"))).toBeUndefined();
  });
});
