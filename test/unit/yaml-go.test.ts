/**
 * YAML read as the Go kubelet v1.20.2 reads static pod manifests and its
 * KubeletConfiguration (src/common/yaml-go.ts). Every expected value was
 * produced by the vendored Go code of the kubernetes-1.20.2 tree (built with
 * Go 1.19): gopkg.in/yaml.v2 v2.2.8 Unmarshal into interface{},
 * sigs.k8s.io/yaml YAMLToJSON, the file source's decode (util/yaml.ToJSON,
 * then legacyscheme.Codecs.UniversalDecoder()) and configfiles'
 * NewFsLoader(...).Load(); strconv.FormatFloat(f, 'g', -1, 32) for keys.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, ManifestError } from '../../src/common/errors.js';
import { formatFloat32, GO_YAML_OPTIONS, goYamlToJson, type GoYamlPath } from '../../src/common/yaml-go.js';
import { loadConfigFile } from '../../src/main/config/load-config.js';
import { decodePodManifest, decodePodsManifest } from '../../src/main/podconfig/manifest.js';
import { FakeClock } from '../fakes/fake-clock.js';

const fail = (path: GoYamlPath, reason: string): never => {
  throw new Error(`${path.join('.')}: ${reason}`);
};
const toJson = (text: string): unknown => goYamlToJson(parse(text, GO_YAML_OPTIONS), { bigint: true, fail });

describe('scalar resolution (go-yaml v2 resolve.go)', () => {
  it.each<[string, unknown]>([
    // The defect: yaml's YAML 1.1 float rule read these as NaN.
    ['e1', 'e1'],
    ['E7', 'E7'],
    // yamlStyleFloat needs a digit before the exponent.
    ['1e3', 1000],
    ['1e7', 1e7],
    ['1.', 1],
    ['.5', 0.5],
    ['+.5', 0.5],
    ['.5_0', 0.5], // text starting with '.' goes to strconv.ParseFloat as written, which takes Go's digit separators
    ['._5', '._5'],
    ['1_0.5', 10.5],
    ['08', 8], // not octal: ParseInt and ParseUint fail, yamlStyleFloat matches
    ['1e999', '1e999'], // ParseFloat's range error leaves a string
    ['1e-400', 0],
    ['.inf', Infinity],
    ['.Inf', Infinity],
    ['+.inf', Infinity],
    ['-.inf', -Infinity],
    ['.nan', NaN],
    ['.iNf', '.iNf'],
    ['-.nan', '-.nan'],
    // strconv.ParseInt(s with every '_' removed, 0, 64).
    ['0x1f', 31n],
    ['0X1F', 31n],
    ['-0x1F', -31n],
    ['0x1_F', 31n],
    ['0o17', 15n],
    ['0O17', 15n],
    ['017', 15n],
    ['0b101', 5n],
    ['0B11', 3n],
    ['-0b101', -5n],
    ['1_000', 1000n],
    ['1__0', 10n],
    ['+12', 12n],
    ['-0', 0n],
    ['0x', '0x'],
    ['+', '+'],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775808', 9223372036854775808n], // ParseUint
    ['18446744073709551615', 18446744073709551615n],
    ['18446744073709551616', 2 ** 64], // beyond uint64: a float
    ['-9223372036854775809', -(2 ** 63)],
    // No sexagesimal numbers, and timestamps decoded into interface{} keep their text (decode.go).
    ['12:30', '12:30'],
    ['1:2', '1:2'],
    ['2001-12-14', '2001-12-14'],
    // resolveMap.
    ['yes', true],
    ['no', false],
    ['on', true],
    ['off', false],
    ['Off', false],
    ['y', true],
    ['n', false],
    ['True', true],
    ['tRUE', 'tRUE'],
    ['~', null],
    ['null', null],
    ['', null],
    ['<<', '<<'],
    // Quoted scalars and !!str are strings as written.
    ['"e1"', 'e1'],
    ["'0x1f'", '0x1f'],
    ['"yes"', 'yes'],
    ["'~'", '~'],
    ['".inf"', '.inf'],
    ['!!str 017', '017'],
    // Explicit tags resolve the same way; an int is taken as a float.
    ['!!float 1', 1],
    ['!!int "12"', 12n],
    ['!!bool yes', true],
  ])('v: %s', (scalar, want) => {
    if (typeof want === 'number' && !Number.isFinite(want)) {
      expect(parse(`v: ${scalar}\n`, GO_YAML_OPTIONS)).toStrictEqual(new Map([['v', want]]));
    } else {
      expect(toJson(`v: ${scalar}\n`)).toStrictEqual({ v: want });
    }
  });

  it('refuses an explicit tag of another kind', () => {
    expect(() => {
      parse('v: !!int abc\n', GO_YAML_OPTIONS);
    }).toThrow('cannot decode !!str `abc` as a !!int');
  });

  it('keeps anchors, aliases and merge keys', () => {
    expect(toJson('base: &b {x: 0x10}\nm:\n  <<: *b\n  z: *b\n')).toStrictEqual({ base: { x: 16n }, m: { x: 16n, z: { x: 16n } } });
  });
});

describe('YAMLToJSON (sigs.k8s.io/yaml convertToJSONableObject, no target)', () => {
  it.each<[string, string]>([
    ['yes', 'true'],
    ['n', 'false'],
    ['0x1f', '31'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['1e3', '1000'],
    ['1e7', '1e+07'],
    ['3.14159265', '3.1415927'],
    ['16777217.0', '1.6777216e+07'],
    ['18446744073709551616', '1.8446744e+19'],
    ['.inf', '.inf'],
    ['-.inf', '-.inf'],
    ['.nan', '.nan'],
    ['12:30', '12:30'],
  ])('key %s → %j', (key, want) => {
    expect(toJson(`${key}: 1\n`)).toStrictEqual({ [want]: 1n });
  });

  it.each([
    ['~', /null map key/],
    ['null', /null map key/],
    ['9223372036854775808', /out of the int64 range/], // its switch has no uint64 case
    ['[a]', /must be a scalar/],
  ])('key %s is an error', (key, re) => {
    expect(() => toJson(`? ${key}\n: 1\n`)).toThrow(re);
  });

  it('refuses NaN and ±Inf values, as json.Marshal does, naming where', () => {
    expect(() => toJson('a:\n  b: [1, .inf]\n')).toThrow(/^a\.b\.1: \+Inf .*unsupported value/);
    expect(() => toJson('a: -.Inf\n')).toThrow(/^a: -Inf/);
    expect(() => toJson('a: .NaN\n')).toThrow(/^a: NaN/);
  });

  it('keeps a __proto__ key as data', () => {
    const doc = toJson('__proto__: {polluted: yes}\n') as Record<string, unknown>;
    expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value).toStrictEqual({ polluted: true });
  });

  it('gives integers as numbers when asked', () => {
    expect(goYamlToJson(parse('a: [0x1f, 1.5]\n', GO_YAML_OPTIONS), { bigint: false, fail })).toStrictEqual({ a: [31, 1.5] });
  });
});

describe('formatFloat32 (strconv.FormatFloat(f, g, -1, 32))', () => {
  it.each<[number, string]>([
    [1000, '1000'],
    [123456, '123456'],
    [1234567, '1.234567e+06'],
    [1e6, '1e+06'],
    [123456789, '1.2345679e+08'],
    [9.999999e6, '9.999999e+06'],
    [0.1, '0.1'],
    [0.3, '0.3'],
    [0.0001, '0.0001'],
    [0.000123, '0.000123'],
    [1e-5, '1e-05'],
    [1e-40, '1e-40'], // subnormal
    [5e-45, '6e-45'],
    [7e-46, '0'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [1e39, '+Inf'],
    [-0, '-0'],
    [-2.5, '-2.5'],
    [NaN, 'NaN'],
    [-Infinity, '-Inf'],
  ])('%d → %s', (f, want) => {
    expect(formatFloat32(f)).toBe(want);
  });
});

const ctx = {
  manifestSource: '/etc/kubernetes/manifests/web.yaml',
  isFile: true,
  sourceName: 'file',
  nodeName: 'node1',
  clock: new FakeClock(),
};

const REJECTED = Symbol('rejected');

/** A pod with `scalar` written unquoted at one place. */
function podWith(place: string, scalar: string): string {
  const at = (p: string, dflt: string) => (p === place ? scalar : dflt);
  return `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: ${at('label', 'web')}
spec:
  containers:
  - name: ${at('name', 'c')}
    image: ${at('image', 'nginx:1.25')}
    stdin: ${at('stdin', 'false')}
    env:
    - name: E
      value: ${at('env', 'v')}
    ports:
    - containerPort: ${at('port', '80')}
`;
}

describe('static pod manifests', () => {
  it('decodes and validates a pod with a container named e1', () => {
    const pod = decodePodManifest(
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: static\nspec:\n  containers:\n  - name: e1\n    image: busybox:1.36\n    args: [E7, 12:30]\n',
      ctx,
    );
    expect(pod.metadata.name).toBe('static-node1');
    expect(pod.spec.containers[0].name).toBe('e1');
    expect(pod.spec.containers[0].args).toEqual(['E7', '12:30']);
    expect(pod.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
  });

  it('decodes a PodList from the http source with the same rules', () => {
    const body = 'apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: e1, image: x, stdin: on}]}\n';
    const [pod] = decodePodsManifest(body, { ...ctx, manifestSource: 'http://127.0.0.1/pods', isFile: false, sourceName: 'http' });
    expect(pod.spec.containers[0]).toMatchObject({ name: 'e1', stdin: true });
  });

  const read: Record<string, (pod: ReturnType<typeof decodePodManifest>) => unknown> = {
    name: (p) => p.spec.containers[0].name,
    image: (p) => p.spec.containers[0].image,
    env: (p) => p.spec.containers[0].env?.[0].value,
    label: (p) => p.metadata.labels?.['app'],
    port: (p) => p.spec.containers[0].ports?.[0].containerPort,
    stdin: (p) => p.spec.containers[0].stdin,
  };
  const strings = ['e1', 'E7', '12:30'];
  const notStrings = ['1e3', '.inf', '-.inf', '.nan', '0x1f', '0o17', '017', '0b101', '1_000', 'yes', 'no', 'on', 'off', 'y', 'n'];
  const quoted: [string, string][] = [
    ['"e1"', 'e1'],
    ["'1e3'", '1e3'],
    ['"0x1f"', '0x1f'],
    ["'017'", '017'],
    ['"yes"', 'yes'],
    ["'no'", 'no'],
    ['".inf"', '.inf'],
    ['"~"', '~'],
    ["'null'", 'null'],
    ['!!str 0x1f', '0x1f'],
  ];
  const rows: [string, string, unknown][] = [
    // A string field takes only what go-yaml resolves to a string: the JSON decode refuses a number or bool.
    ...['image', 'env'].flatMap((f) => [
      ...strings.map((s): [string, string, unknown] => [f, s, s]),
      ...notStrings.map((s): [string, string, unknown] => [f, s, REJECTED]),
      ...quoted.map(([s, v]): [string, string, unknown] => [f, s, v]),
    ]),
    ['label', 'e1', 'e1'],
    ['label', 'E7', 'E7'],
    ['label', 'on', REJECTED],
    ['label', '0x1f', REJECTED],
    ['label', '"017"', '017'],
    ['name', 'e1', 'e1'],
    ['name', 'yes', REJECTED],
    ['name', '~', REJECTED], // Go: "" then Required value
    ['name', '0b101', REJECTED],
    // int32: an integer, or a float with no fraction (json.Marshal writes 1000 and 8080).
    ['port', '0x1f', 31],
    ['port', '0o17', 15],
    ['port', '017', 15],
    ['port', '0b101', 5],
    ['port', '1_000', 1000],
    ['port', '1e3', 1000],
    ['port', '8080.0', 8080],
    ['port', '80.5', REJECTED],
    ['port', '12:30', REJECTED],
    ['port', 'yes', REJECTED],
    ['port', '.inf', REJECTED],
    ['port', '"80"', REJECTED],
    // bool.
    ['stdin', 'yes', true],
    ['stdin', 'no', false],
    ['stdin', 'on', true],
    ['stdin', 'off', false],
    ['stdin', 'y', true],
    ['stdin', 'n', false],
    ['stdin', 'True', true],
    ['stdin', '"true"', REJECTED],
    ['stdin', '0x1f', REJECTED],
  ];
  it.each(rows)('%s: %s', (place, scalar, want) => {
    const decode = () => decodePodManifest(podWith(place, scalar), ctx);
    if (want === REJECTED) expect(decode).toThrow(ManifestError);
    else expect(read[place](decode())).toStrictEqual(want);
  });

  it('names where a .inf or .nan value is', () => {
    expect(() => decodePodManifest(podWith('image', '.nan'), ctx)).toThrow(
      /web\.yaml: cannot convert YAML to JSON: spec\.containers\.0\.image: NaN .*; fix the manifest/,
    );
  });

  it('keeps JSON strict: a number is not a string', () => {
    const json = (name: string) =>
      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":${name},"image":"x:1"}]}}`;
    expect(decodePodManifest(json('"e1"'), ctx).spec.containers[0].name).toBe('e1');
    expect(() => decodePodManifest(json('1'), ctx)).toThrow(/spec\.containers\.0\.name: .*expected string/);
    expect(() => decodePodManifest(json('true'), ctx)).toThrow(ManifestError);
  });
});

describe('KubeletConfiguration file', () => {
  const FILE = '/etc/kubelet-ts/config.yaml';
  const load = (body: string) =>
    loadConfigFile(FILE, () => `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}\n`) as Record<
      string,
      unknown
    >;

  it.each<[string, string, unknown]>([
    ['staticPodURL', 'e1', 'e1'],
    ['staticPodURL', 'E7', 'E7'],
    ['staticPodURL', '12:30', '12:30'],
    ['staticPodURL', '"yes"', 'yes'],
    ['staticPodURL', 'yes', REJECTED],
    ['staticPodURL', '0x1f', REJECTED],
    ['staticPodURL', '1e3', REJECTED],
    ['clusterDomain', 'on', REJECTED],
    ['failSwapOn', 'yes', true],
    ['failSwapOn', 'no', false],
    ['failSwapOn', 'on', true],
    ['failSwapOn', 'off', false],
    ['failSwapOn', 'y', true],
    ['failSwapOn', 'n', false],
    ['failSwapOn', 'True', true],
    ['failSwapOn', '"yes"', REJECTED],
    ['maxPods', '0x1f', 31],
    ['maxPods', '0o17', 15],
    ['maxPods', '017', 15],
    ['maxPods', '0b101', 5],
    ['maxPods', '1_000', 1000],
    ['maxPods', '1e3', 1000],
    ['maxPods', '12:30', REJECTED],
    ['maxPods', 'yes', REJECTED],
    ['maxPods', '.inf', REJECTED],
    ['featureGates', '{Foo: on, Bar: n}', { Foo: true, Bar: false }],
    ['featureGates', '{Foo: "on"}', REJECTED],
    ['staticPodURLHeader', '{X-A: [e1, E7, "0x1f"]}', { 'X-A': ['e1', 'E7', '0x1f'] }],
    ['staticPodURLHeader', '{X-A: [e1, 0x1f]}', REJECTED],
    ['systemReserved', '{cpu: "1e3"}', { cpu: '1e3' }],
    ['systemReserved', '{cpu: 1e3}', REJECTED],
    ['systemReserved', '{memory: 1_000}', REJECTED],
  ])('%s: %s', (field, value, want) => {
    if (want === REJECTED) expect(() => load(`${field}: ${value}`)).toThrow(ConfigError);
    else expect(load(`${field}: ${value}`)[field]).toStrictEqual(want);
  });

  it('names the file and field of a .inf value', () => {
    expect(() => load('maxPods: .inf')).toThrow(/^\/etc\/kubelet-ts\/config\.yaml: maxPods: \+Inf .*unsupported value/);
  });
});
