import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../src/main/podconfig/types.js';

const pod = (name: string, uid: string, annotations: Record<string, string> = {}, namespace = 'default'): Pod =>
  ({ metadata: { name, namespace, uid, annotations }, spec: {} }) as Pod;
const staticPod = (name: string, uid: string, hash: string, namespace = 'default') =>
  pod(name, uid, { [CONFIG_SOURCE_ANNOTATION]: 'file', [CONFIG_HASH_ANNOTATION]: hash }, namespace);
const mirror = (name: string, uid: string, hash: string, namespace = 'default') =>
  pod(name, uid, { [CONFIG_SOURCE_ANNOTATION]: 'api', [CONFIG_MIRROR_ANNOTATION]: hash }, namespace);
const apiPod = (name: string, uid: string) => pod(name, uid, { [CONFIG_SOURCE_ANNOTATION]: 'api' });
const uids = (pods: Pod[]) => pods.map((p) => p.metadata.uid).sort();

describe('PodManager', () => {
  it('keeps mirror pods apart: get, pods(), size and getByFullName see regular pods only', () => {
    const pm = new PodManager();
    pm.addOrUpdate(staticPod('web', 's1', 'h1'));
    pm.addOrUpdate(mirror('web', 'm1', 'h1'));
    pm.addOrUpdate(apiPod('job', 'a1'));
    expect(uids(pm.pods())).toEqual(['a1', 's1']);
    expect(pm.size).toBe(2);
    expect(uids(pm.mirrorPods())).toEqual(['m1']);
    expect(pm.get('m1')).toBeUndefined();
    expect(pm.get('s1')?.metadata.uid).toBe('s1');
    expect(pm.getByFullName('web_default')?.metadata.uid).toBe('s1');
  });

  it('finds a static pod’s mirror and a mirror’s static pod by full name', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    const m = mirror('web', 'm1', 'h1');
    pm.addOrUpdate(s);
    expect(pm.mirrorPodOf(s)).toBeUndefined();
    pm.addOrUpdate(m);
    expect(pm.mirrorPodOf(s)?.metadata.uid).toBe('m1');
    expect(pm.podOfMirror(m)?.metadata.uid).toBe('s1');
    // Another namespace is another full name.
    expect(pm.mirrorPodOf(staticPod('web', 's2', 'h1', 'other'))).toBeUndefined();
    expect(pm.podOfMirror(mirror('web', 'm2', 'h1', 'other'))).toBeUndefined();
  });

  it.each([
    { name: 'same full name, mirror hash = config.hash', m: mirror('web', 'm', 'h1'), p: staticPod('web', 's', 'h1'), want: true },
    { name: 'another hash (the static pod changed)', m: mirror('web', 'm', 'h0'), p: staticPod('web', 's', 'h1'), want: false },
    { name: 'another name', m: mirror('web2', 'm', 'h1'), p: staticPod('web', 's', 'h1'), want: false },
    { name: 'another namespace', m: mirror('web', 'm', 'h1', 'ns2'), p: staticPod('web', 's', 'h1'), want: false },
    { name: 'not a mirror (no config.mirror)', m: staticPod('web', 'm', 'h1'), p: staticPod('web', 's', 'h1'), want: false },
    { name: 'the pod has no config.hash', m: mirror('web', 'm', 'h1'), p: apiPod('web', 's'), want: false },
  ])('isMirrorPodOf: $name → $want', ({ m, p, want }) => {
    expect(new PodManager().isMirrorPodOf(m, p)).toBe(want);
  });

  it('removing a mirror pod drops it from both indexes and leaves its static pod', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    const m = mirror('web', 'm1', 'h1');
    pm.addOrUpdate(s);
    pm.addOrUpdate(m);
    pm.remove(m);
    expect(pm.mirrorPodOf(s)).toBeUndefined();
    expect(pm.mirrorPods()).toEqual([]);
    expect(pm.get('s1')).toBe(s);
    expect(pm.podOfMirror(m)).toBe(s);
  });

  it('removing a static pod orphans its mirror (podOfMirror undefined)', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    const m = mirror('web', 'm1', 'h1');
    pm.addOrUpdate(s);
    pm.addOrUpdate(m);
    pm.remove(s);
    expect(pm.podOfMirror(m)).toBeUndefined();
    expect(pm.pods()).toEqual([]);
    expect(pm.mirrorPodOf(s)).toBe(m);
  });

  it('an update replaces the pod in both indexes', () => {
    const pm = new PodManager();
    pm.addOrUpdate(staticPod('web', 's1', 'h1'));
    const updated = staticPod('web', 's1', 'h2');
    pm.addOrUpdate(updated);
    expect(pm.get('s1')).toBe(updated);
    expect(pm.getByFullName('web_default')).toBe(updated);
    expect(pm.size).toBe(1);
  });

  it('a recreated mirror pod (new UID) replaces the old one by full name', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    pm.addOrUpdate(s);
    pm.addOrUpdate(mirror('web', 'm1', 'h1'));
    pm.remove(mirror('web', 'm1', 'h1'));
    pm.addOrUpdate(mirror('web', 'm2', 'h1'));
    expect(pm.mirrorPodOf(s)?.metadata.uid).toBe('m2');
    expect(uids(pm.mirrorPods())).toEqual(['m2']);
  });

  // PodConfig delivers ADDs before REMOVEs of one merge, so the new mirror can
  // arrive before the old one leaves. (Upstream's removePod deletes the full-name
  // entry unconditionally here; keeping the newer pod is deliberate.)
  it('removing the old UID after its successor was added keeps the successor', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    pm.addOrUpdate(s);
    pm.addOrUpdate(mirror('web', 'm1', 'h1'));
    pm.addOrUpdate(mirror('web', 'm2', 'h1'));
    pm.remove(mirror('web', 'm1', 'h1'));
    expect(pm.mirrorPodOf(s)?.metadata.uid).toBe('m2');
    expect(uids(pm.mirrorPods())).toEqual(['m2']);
  });

  it('removing an unknown pod changes nothing', () => {
    const pm = new PodManager();
    const s = staticPod('web', 's1', 'h1');
    pm.addOrUpdate(s);
    pm.remove(staticPod('web', 'other-uid', 'h1'));
    expect(pm.getByFullName('web_default')).toBe(s);
    expect(pm.size).toBe(1);
  });
});
