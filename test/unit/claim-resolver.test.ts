import { describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim, Volume } from '../../src/api/core-v1.js';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { resolveClaim, type ClaimSource } from '../../src/main/volumes/claim-resolver.js';

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [] } };
const vol = (readOnly?: boolean): Volume => ({ name: 'data', persistentVolumeClaim: { claimName: 'c', readOnly } });

const boundClaim = (): PersistentVolumeClaim => ({
  metadata: { name: 'c', namespace: 'ns', uid: 'claim-uid' },
  spec: { volumeName: 'pv-1' },
  status: { phase: 'Bound' },
});
const boundVolume = (): PersistentVolume => ({
  metadata: { name: 'pv-1' },
  spec: { local: { path: '/mnt/d' }, claimRef: { namespace: 'ns', name: 'c', uid: 'claim-uid' } },
});

/** A ClaimSource over fixed objects; a missing one is the apiserver's 404 as the rest client reports it. */
function source(claim?: PersistentVolumeClaim, pv?: PersistentVolume): ClaimSource {
  const notFound = (path: string, what: string) => new ApiStatusError(`GET ${path}: 404 NotFound: ${what} not found`, 404, 'NotFound');
  return {
    getClaim: async (ns, name) => {
      if (!claim) throw notFound(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`, `persistentvolumeclaims "${name}"`);
      return claim;
    },
    getVolume: async (name) => {
      if (!pv) throw notFound(`/api/v1/persistentvolumes/${name}`, `persistentvolumes "${name}"`);
      return pv;
    },
  };
}

describe('resolveClaim (upstream getPVCExtractPV / getPVSpec)', () => {
  it('resolves a bound claim to its PV with the claim source read-only flag', async () => {
    const r = await resolveClaim(source(boundClaim(), boundVolume()), pod, vol(true));
    expect(r.pv.metadata?.name).toBe('pv-1');
    expect(r.readOnly).toBe(true);
    expect(r.claim).toBe('ns/c');
    expect((await resolveClaim(source(boundClaim(), boundVolume()), pod, vol())).readOnly).toBe(false);
  });

  const withClaim = (f: (c: PersistentVolumeClaim) => void) => {
    const c = boundClaim();
    f(c);
    return c;
  };
  const withVolume = (f: (v: PersistentVolume) => void) => {
    const v = boundVolume();
    f(v);
    return v;
  };

  it.each([
    [
      'a missing claim',
      source(undefined, boundVolume()),
      'error processing PVC ns/c: failed to fetch PVC from API server: persistentvolumeclaims "c" not found',
    ],
    [
      'a claim being deleted',
      source(
        withClaim((c) => (c.metadata!.deletionTimestamp = '2026-11-27T10:00:00Z')),
        boundVolume(),
      ),
      'error processing PVC ns/c: PVC is being deleted',
    ],
    [
      'a pending claim',
      source(
        withClaim((c) => ((c.status!.phase = 'Pending'), (c.spec!.volumeName = undefined))),
        boundVolume(),
      ),
      'error processing PVC ns/c: PVC is not bound',
    ],
    [
      'a lost claim',
      source(
        withClaim((c) => (c.status!.phase = 'Lost')),
        boundVolume(),
      ),
      'error processing PVC ns/c: PVC is not bound',
    ],
    [
      'a bound claim without a volume name',
      source(
        withClaim((c) => (c.spec!.volumeName = '')),
        boundVolume(),
      ),
      'error processing PVC ns/c: PVC has empty pvc.Spec.VolumeName',
    ],
    [
      'a missing PV',
      source(boundClaim()),
      'error processing PVC ns/c: failed to fetch PV pv-1 from API server: persistentvolumes "pv-1" not found',
    ],
    [
      'a PV not yet bound',
      source(
        boundClaim(),
        withVolume((v) => delete v.spec!.claimRef),
      ),
      'error processing PVC ns/c: found PV object pv-1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim',
    ],
    [
      'a PV bound to another claim',
      source(
        boundClaim(),
        withVolume((v) => (v.spec!.claimRef!.uid = 'other')),
      ),
      'error processing PVC ns/c: found PV object pv-1 but its pv.Spec.ClaimRef.UID other does not point to claim.UID claim-uid',
    ],
    [
      'a block PV in volumeMounts',
      source(
        boundClaim(),
        withVolume((v) => (v.spec!.volumeMode = 'Block')),
      ),
      'volume data has volumeMode Block, but is specified in volumeMounts',
    ],
  ])("%s is upstream's error", async (_name, src, message) => {
    await expect(resolveClaim(src, pod, vol())).rejects.toThrow(new Error(message));
  });
});
