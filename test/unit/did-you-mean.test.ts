import { describe, expect, it } from 'vitest';
import { closestNames, didYouMean } from '../../src/common/did-you-mean.js';

describe('did you mean (one helper for flags, config fields and manifest fields)', () => {
  it.each([
    ['a missing letter', 'maxPod', ['maxPods', 'maxOpenFiles', 'podPidsLimit'], ['maxPods']],
    ['a typo in a flag', 'pod-manifest-pth', ['pod-manifest-path', 'pod-logs-dir', 'manifest-url'], ['pod-manifest-path']],
    ['a doubled letter', 'imagee', ['image', 'imagePullPolicy', 'name'], ['image']],
    ['case only', 'maxpods', ['maxPods'], ['maxPods']],
    ['equally close names, in the order given', 'pot', ['port', 'pod', 'pods'], ['port', 'pod']],
    ['nothing close', 'colour', ['image', 'name', 'command'], []],
    ['two swapped letters', 'prot', ['port', 'pods'], ['port']],
    ['short names are not offered for different ones', 'ab', ['cd', 'a'], []],
  ])('%s', (_name, typed, candidates, expected) => {
    expect(closestNames(typed, candidates)).toEqual(expected);
  });

  it('words the hint', () => {
    expect(didYouMean('maxPod', ['maxPods'])).toBe('did you mean maxPods?');
    expect(didYouMean('pot', ['port', 'pod'], (n) => `--${n}`)).toBe('did you mean --port or --pod?');
    expect(didYouMean('zzzzzz', ['image'])).toBe('');
  });
});
