import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { applyV1Defaults } from '../../src/main/podconfig/defaults.js';
import { formatFieldError, formatFieldErrors, validatePod } from '../../src/main/podconfig/validation.js';

const validPod = (): Pod =>
  applyV1Defaults(
    PodSchema.parse({
      metadata: { name: 'web-node1', namespace: 'default' },
      spec: {
        initContainers: [{ name: 'init', image: 'busybox:1' }],
        containers: [
          {
            name: 'web',
            image: 'nginx:1.25',
            ports: [{ name: 'http', containerPort: 80 }],
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
            readinessProbe: { tcpSocket: { port: 80 } },
          },
          { name: 'side', image: 'busybox:1' },
        ],
      },
    }),
  );

const cases: { name: string; mutate: (p: Pod) => void; errors: string[] }[] = [
  { name: 'valid baseline', mutate: () => {}, errors: [] },
  {
    name: 'duplicate container name across app containers',
    mutate: (p) => (p.spec.containers[1].name = 'web'),
    errors: ['spec.containers[1].name: Duplicate value: "web"'],
  },
  {
    name: 'duplicate name between init and app containers',
    mutate: (p) => (p.spec.initContainers![0].name = 'web'),
    errors: ['spec.containers[0].name: Duplicate value: "web"'],
  },
  { name: 'no containers', mutate: (p) => (p.spec.containers = []), errors: ['spec.containers: Required value'] },
  { name: 'image required', mutate: (p) => delete p.spec.containers[1].image, errors: ['spec.containers[1].image: Required value'] },
  {
    name: 'bad restartPolicy',
    mutate: (p) => (p.spec.restartPolicy = 'Sometimes'),
    errors: ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
  },
  {
    name: 'invalid pod name',
    mutate: (p) => (p.metadata.name = 'Web_1'),
    errors: [expect.stringMatching(/^metadata\.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain/) as string],
  },
  {
    name: 'missing name',
    mutate: (p) => (p.metadata.name = ''),
    errors: ['metadata.name: Required value: name or generateName is required'],
  },
  {
    name: 'invalid namespace',
    mutate: (p) => (p.metadata.namespace = 'a.b'),
    errors: [expect.stringMatching(/^metadata\.namespace: Invalid value: "a\.b": a lowercase RFC 1123 label/) as string],
  },
  {
    name: 'invalid quantity',
    mutate: (p) => (p.spec.containers[0].resources!.limits!.cpu = 'lots'),
    errors: [
      expect.stringMatching(/^spec\.containers\[0\]\.resources\.limits\[cpu\]: Invalid value: "lots": quantities must match/) as string,
    ],
  },
  {
    name: 'request above limit',
    mutate: (p) => (p.spec.containers[0].resources!.requests!.memory = '1Gi'),
    errors: ['spec.containers[0].resources.requests: Invalid value: "1Gi": must be less than or equal to memory limit of 128Mi'],
  },
  {
    name: 'negative request',
    mutate: (p) => (p.spec.containers[0].resources!.requests!.cpu = '-1'),
    errors: ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
  },
  {
    name: 'port out of range',
    mutate: (p) => (p.spec.containers[0].ports![0].containerPort = 70000),
    errors: ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
  },
  {
    name: 'probe threshold zero',
    mutate: (p) => (p.spec.containers[0].readinessProbe!.failureThreshold = 0),
    errors: ['spec.containers[0].readinessProbe.failureThreshold: Invalid value: 0: must be greater than or equal to 1'],
  },
  {
    name: 'liveness successThreshold must be 1',
    mutate: (p) => (p.spec.containers[0].livenessProbe = { exec: { command: ['true'] }, successThreshold: 2 }),
    errors: ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'],
  },
  {
    name: 'probe without handler',
    mutate: (p) => (p.spec.containers[0].readinessProbe = { periodSeconds: 5 }),
    errors: ['spec.containers[0].readinessProbe: Required value: must specify a handler type'],
  },
  {
    name: 'bad protocol',
    mutate: (p) => (p.spec.containers[0].ports![0].protocol = 'ICMP'),
    errors: ['spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'],
  },
  {
    name: 'duplicate volume',
    mutate: (p) =>
      (p.spec.volumes = [
        { name: 'v', emptyDir: {} },
        { name: 'v', emptyDir: {} },
      ]),
    errors: ['spec.volumes[1].name: Duplicate value: "v"'],
  },
];

describe('validatePod', () => {
  it.each(cases)('$name', ({ mutate, errors }) => {
    const pod = validPod();
    mutate(pod);
    expect(validatePod(pod).map(formatFieldError)).toEqual(errors);
  });

  it('aggregates several errors like upstream', () => {
    const pod = validPod();
    pod.spec.containers = [];
    pod.spec.restartPolicy = '';
    expect(formatFieldErrors(validatePod(pod))).toBe('[spec.containers: Required value, spec.restartPolicy: Required value]');
  });
});
