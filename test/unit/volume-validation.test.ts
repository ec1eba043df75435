import { describe, expect, it } from 'vitest';
import type { Container, Volume } from '../../src/api/core-v1.js';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { applyV1Defaults } from '../../src/main/podconfig/defaults.js';
import { formatFieldError, validatePod } from '../../src/main/podconfig/validation.js';

/** A valid pod using every supported volume source. */
const basePod = (): Pod =>
  applyV1Defaults(
    PodSchema.parse({
      metadata: { name: 'web-node1', namespace: 'default' },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1',
            volumeMounts: [
              { name: 'data', mountPath: '/data' },
              { name: 'cfg', mountPath: '/cfg', readOnly: true },
              { name: 'data', mountPath: '/logs', subPath: 'logs' },
            ],
          },
        ],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
          { name: 'cfg', configMap: { name: 'app', items: [{ key: 'k', path: 'dir/k', mode: 0o400 }] } },
          { name: 'sec', secret: { secretName: 's' } },
          { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'ca' } }] } },
        ],
      },
    }),
  );

type Mut = (p: Pod) => void;
const vol = (p: Pod, name: string): Volume => p.spec.volumes!.find((v) => v.name === name)!;
const mount = (p: Pod, i: number): NonNullable<Container['volumeMounts']>[number] => p.spec.containers[0].volumeMounts![i];

const cases: [string, Mut, string[]][] = [
  ['valid baseline', () => {}, []],
  ['duplicate volume name', (p) => (vol(p, 'sec').name = 'data'), ['spec.volumes[3].name: Duplicate value: "data"']],
  [
    'volume name not a DNS label',
    (p) => (vol(p, 'sec').name = 'Bad_Name'),
    [expect.stringMatching(/^spec\.volumes\[3\]\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label/)],
  ],
  [
    'two sources',
    (p) => (vol(p, 'data').hostPath = { path: '/x' }),
    ['spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'],
  ],
  [
    'hostPath with ..',
    (p) => (vol(p, 'host').hostPath!.path = '/var/../etc'),
    [`spec.volumes[1].hostPath.path: Invalid value: "/var/../etc": must not contain '..'`],
  ],
  [
    'hostPath type',
    (p) => (vol(p, 'host').hostPath!.type = 'Dir'),
    [
      'spec.volumes[1].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    ],
  ],
  ['configMap name', (p) => delete vol(p, 'cfg').configMap!.name, ['spec.volumes[2].configMap.name: Required value']],
  [
    'configMap item path absolute',
    (p) => (vol(p, 'cfg').configMap!.items![0].path = '/k'),
    ['spec.volumes[2].configMap.items[0].path: Invalid value: "/k": must be a relative path'],
  ],
  [
    'configMap item path ..',
    (p) => (vol(p, 'cfg').configMap!.items![0].path = '..k'),
    [`spec.volumes[2].configMap.items[0].path: Invalid value: "..k": must not start with '..'`],
  ],
  [
    'defaultMode range',
    (p) => (vol(p, 'sec').secret!.defaultMode = 0o1000),
    ['spec.volumes[3].secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive'],
  ],
  ['secretName', (p) => delete vol(p, 'sec').secret!.secretName, ['spec.volumes[3].secret.secretName: Required value']],
  [
    'downwardAPI fieldPath',
    (p) => (vol(p, 'info').downwardAPI!.items![0].fieldRef!.fieldPath = 'status.podIP'),
    [
      'spec.volumes[4].downwardAPI.items[0].fieldRef.fieldPath: Unsupported value: "status.podIP": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"',
    ],
  ],
  [
    'token expiration',
    (p) => (vol(p, 'token').projected!.sources![0].serviceAccountToken!.expirationSeconds = 60),
    [
      'spec.volumes[5].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    ],
  ],
  ['mount of an unknown volume', (p) => (mount(p, 0).name = 'nope'), ['spec.containers[0].volumeMounts[0].name: Not found: "nope"']],
  [
    'duplicate mountPath',
    (p) => (mount(p, 1).mountPath = '/data'),
    ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/data": must be unique'],
  ],
  [
    'subPath with ..',
    (p) => (mount(p, 2).subPath = '../../etc'),
    [`spec.containers[0].volumeMounts[2].subPath: Invalid value: "../../etc": must not contain '..'`],
  ],
  [
    'absolute subPath',
    (p) => (mount(p, 2).subPath = '/etc'),
    ['spec.containers[0].volumeMounts[2].subPath: Invalid value: "/etc": must be a relative path'],
  ],
  [
    'Bidirectional without privileged',
    (p) => (mount(p, 0).mountPropagation = 'Bidirectional'),
    [
      'spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers',
    ],
  ],
  [
    'unknown propagation',
    (p) => (mount(p, 0).mountPropagation = 'Shared'),
    [
      'spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"',
    ],
  ],
];

describe('volume validation (upstream ValidateVolumes / ValidateVolumeMounts)', () => {
  it.each(cases)('%s', (_name, mutate, want) => {
    const p = basePod();
    mutate(p);
    expect(validatePod(p).map(formatFieldError)).toEqual(want);
  });
});

describe('volume defaults (SetDefaults_*VolumeSource)', () => {
  it('defaultMode 0644, hostPath type "", fieldRef apiVersion v1, token expiration 3600 s', () => {
    const p = basePod();
    const v = (name: string) => vol(p, name);
    expect(v('cfg').configMap?.defaultMode).toBe(0o644);
    expect(v('sec').secret?.defaultMode).toBe(0o644);
    expect(v('info').downwardAPI?.defaultMode).toBe(0o644);
    expect(v('info').downwardAPI?.items?.[0]?.fieldRef?.apiVersion).toBe('v1');
    expect(v('token').projected?.defaultMode).toBe(0o644);
    expect(v('token').projected?.sources?.[0]?.serviceAccountToken?.expirationSeconds).toBe(3600);
    expect(v('host').hostPath?.type).toBe('Directory');
    const bare = applyV1Defaults(PodSchema.parse({ spec: { volumes: [{ name: 'h', hostPath: { path: '/x' } }, { name: 'e' }] } }));
    expect(bare.spec.volumes).toEqual([
      { name: 'h', hostPath: { path: '/x', type: '' } },
      { name: 'e', emptyDir: {} },
    ]);
  });
});
