import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { extraSupplementalGroups, generateContainerConfig } from '../../src/workers/sync/container-config.js';

const pod = (supplementalGroups?: number[]): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: { securityContext: { fsGroup: 2000, supplementalGroups }, containers: [{ name: 'app', image: 'busybox' }] },
});

describe('extra supplemental groups from PV gid annotations (upstream GetExtraSupplementalGroupsForPod)', () => {
  it('distinct numeric gids of the volumes, in string order, without the pod own supplementalGroups', () => {
    const volumes = {
      a: { path: '/a', readOnly: false, gid: '3456' },
      b: { path: '/b', readOnly: false, gid: '123' },
      c: { path: '/c', readOnly: false, gid: '3456' },
      d: { path: '/d', readOnly: false, gid: 'staff' },
      e: { path: '/e', readOnly: false, gid: '500' },
      f: { path: '/f', readOnly: false },
    };
    expect(extraSupplementalGroups(pod([500]), volumes)).toEqual([123, 3456]);
    expect(extraSupplementalGroups(pod(), undefined)).toEqual([]);
  });

  it('are appended after the pod groups (fsGroup first) in each container security context', () => {
    const config = generateContainerConfig(pod([7]), 0, {
      kind: 'regular',
      restartCount: 0,
      podIP: '',
      podIPs: [],
      nodeName: 'n',
      imageRef: 'busybox',
      extraSupplementalGroups: [3456],
    });
    expect(config.linux?.securityContext?.supplementalGroups).toEqual([2000n, 7n, 3456n]);
  });
});
