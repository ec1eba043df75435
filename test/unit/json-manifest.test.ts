import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseJsonManifest } from '../../src/main/podconfig/json-manifest.js';

const yaml11 = (text: string): unknown => parseYaml(text, { version: '1.1', intAsBigInt: true });

/** The fast path answers only with what the YAML parser gives. */
function expectSameAsYaml(text: string): void {
  const fast = parseJsonManifest(text);
  expect(fast).toBeDefined();
  expect(fast).toStrictEqual(yaml11(text));
}

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', labels: { app: 'web', '1': 'one' }, annotations: { a: 'yes', b: 'on', c: '0644' } },
  spec: {
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 5,
    containers: [
      {
        name: 'c',
        image: 'docker.io/library/busybox:1.36',
        command: ['sh', '-c', 'echo "hi: there" # not a comment\n\tdone'],
        ports: [{ containerPort: 8080, hostPort: -1 }],
        resources: { limits: { cpu: '100m', memory: '64Mi' } },
        env: [{ name: 'X', value: '{"a": [1, 2]}' }],
      },
    ],
    volumes: [],
    nodeSelector: {},
    someFutureField: null,
    enableServiceLinks: false,
  },
};

describe('parseJsonManifest', () => {
  it('gives what the YAML 1.1 parser gives for JSON manifests, integers as bigint', () => {
    for (const text of [
      JSON.stringify(pod),
      JSON.stringify(pod, null, 2),
      JSON.stringify(pod, null, '\t'),
      `  ${JSON.stringify(pod)}\r\n`,
    ]) {
      expectSameAsYaml(text);
    }
    const doc = parseJsonManifest(JSON.stringify(pod))!;
    expect((doc['spec'] as { terminationGracePeriodSeconds: unknown }).terminationGracePeriodSeconds).toBe(5n);
  });

  it('matches the YAML parser on escapes, quoted YAML keywords and integer edge cases', () => {
    for (const text of [
      '{"a":"x\\/y\\"z\\\\\\b\\f\\n\\r\\t\\u0041\\u00e9\\ud83d\\ude00\\ud800"}',
      '{"a":"yes","b":"no","c":"~","d":"null","e":"0644","f":"1e3","g":"<<"}',
      '{"<<":{"x":1},"y":2}',
      '{"a":-0,"b":0,"c":-999999999999999,"d":999999999999999,"e":[-1,0,1]}',
      '{"2":1,"b":2,"0":3}',
      '{"a":{},"b":[],"c":[[],[{}]],"d":true,"e":false,"f":null}',
      `{"${'k'.repeat(1100)}":"${'v'.repeat(5000)}"}`,
      '{\n"a"\n:\n1\n,"b":{\n"c":2}\n}',
      '{}',
    ]) {
      expectSameAsYaml(text);
    }
  });

  it('leaves to the YAML parser what it cannot be sure about', () => {
    for (const text of [
      'apiVersion: v1\nkind: Pod\n', // YAML
      '{"a": 1} # comment', // not JSON
      '[{"a":1}]', // not an object
      '"x"',
      '{"a":1,"a":2}', // duplicate key: YAML rejects it
      '{"a":{"b":1,"b":1}}',
      '{"a":1.0}', // a float: YAML gives a number, not a bigint
      '{"a":1e3}',
      '{"a":1234567890123456}', // beyond 15 digits
      '{"a":"é"}', // not ASCII
      '\ufeff{"a":1}',
      '{"a":"x\u2028y"}',
      '{"__proto__":{"x":1}}',
      `{"a":${'['.repeat(100)}${']'.repeat(100)}}`, // deeper than the fast path goes (the YAML parser runs out of stack at some depth)
    ]) {
      expect(parseJsonManifest(text), text.slice(0, 40)).toBeUndefined();
    }
  });

  it('agrees with the YAML parser on generated documents', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const chars = ' azAZ09:#-?{}[],&*!|>\'"%@`\\/\t\n\u0001~';
    const str = () => Array.from({ length: rand(8) }, () => chars[rand(chars.length)]).join('');
    const value = (depth: number): unknown => {
      switch (rand(depth > 4 ? 4 : 6)) {
        case 0:
          return str();
        case 1:
          return rand(2_000_001) - 1_000_000;
        case 2:
          return [true, false, null][rand(3)];
        case 3:
          return ['yes', 'off', '0x1F', '1_000', '.5', '-', ''][rand(7)];
        case 4:
          return Array.from({ length: rand(4) }, () => value(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: rand(5) }, () => [str(), value(depth + 1)]));
      }
    };
    let answered = 0;
    for (let i = 0; i < 300; i++) {
      const doc = Object.fromEntries(Array.from({ length: 1 + rand(6) }, () => [str(), value(0)]));
      const text = JSON.stringify(doc, null, rand(2) ? 2 : undefined);
      const fast = parseJsonManifest(text);
      if (fast === undefined) continue;
      answered++;
      expect(fast).toStrictEqual(yaml11(text));
    }
    // Only generated duplicate keys send a document to the YAML parser.
    expect(answered).toBeGreaterThan(250);
  });
});
