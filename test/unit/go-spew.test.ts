import { describe, expect, it } from 'vitest';
import { GoSpew, type GoTypes } from '../../src/main/podconfig/static-pod-uid/go-spew.js';

const types: GoTypes = {
  'x.T': {
    k: 'struct',
    f: [
      ['Name', 'string', 'name'],
      ['Labels', 'map[string]string', 'labels'],
      ['Inner', 'x.Inner', 'inner'],
      ['Ptr', '*x.Inner', 'ptr'],
      ['Items', '[]x.Inner', 'items'],
    ],
  },
  'x.Inner': {
    k: 'struct',
    f: [
      ['N', 'int32', 'n'],
      ['On', 'bool', 'on'],
    ],
  },
  '*x.Inner': { k: 'ptr', e: 'x.Inner' },
  '[]x.Inner': { k: 'slice', e: 'x.Inner' },
  'map[string]string': { k: 'map', key: 'string', e: 'string' },
  string: { k: 'string' },
  int32: { k: 'int32' },
  bool: { k: 'bool' },
};

describe('GoSpew', () => {
  it('renders zero values, pointers, slices and structs as go-spew %#v', () => {
    const spew = new GoSpew(types);
    const zero =
      '(x.T){Name:(string) Labels:(map[string]string)<nil> Inner:(x.Inner){N:(int32)0 On:(bool)false} Ptr:(*x.Inner)<nil> Items:([]x.Inner)<nil>}';
    expect(spew.render('x.T', undefined)).toBe(zero);
    expect(spew.render('x.T', {})).toBe(zero);
    expect(spew.render('x.T', { Name: 'a', Inner: { N: 3n }, Ptr: {}, Items: [{ On: true }, null] })).toBe(
      '(x.T){Name:(string)a Labels:(map[string]string)<nil> Inner:(x.Inner){N:(int32)3 On:(bool)false} ' +
        'Ptr:(*x.Inner){N:(int32)0 On:(bool)false} Items:([]x.Inner)[{N:(int32)0 On:(bool)true} {N:(int32)0 On:(bool)false}]}',
    );
    // the zero renderings are remembered, not shared with non-zero values
    expect(spew.render('x.T', undefined)).toBe(zero);
  });

  it('sorts map keys by their UTF-8 bytes', () => {
    const spew = new GoSpew(types);
    const labels = { '\u{1F600}': '4', '\uFFFF': '3', é: '2', b: '1', a: '0' };
    expect(spew.render('map[string]string', labels)).toBe('(map[string]string)map[a:0 b:1 é:2 \uFFFF:3 \u{1F600}:4]');
    // a lone surrogate encodes as U+FFFD (EF BF BD), before U+FFFF
    expect(spew.render('map[string]string', { '\uFFFF': 'y', '\uD800': 'x' })).toBe('(map[string]string)map[\uD800:x \uFFFF:y]');
    expect(spew.render('map[string]string', { b: '', a: '' })).toBe('(map[string]string)map[a: b:]');
  });
});
