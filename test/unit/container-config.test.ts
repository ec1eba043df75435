import { describe, expect, it } from 'vitest';
import { PodSchema, type Container, type Pod } from '../../src/api/pod.js';
import { KubeletTsError } from '../../src/common/errors.js';
import { NamespaceMode, SecurityProfile_ProfileType } from '../../src/gen/runtime/v1/api.js';
import { hashContainer } from '../../src/pod/container-hash.js';
import { DEFAULT_MASKED_PATHS, generateContainerConfig, type ContainerConfigOptions } from '../../src/workers/sync/container-config.js';
import { milliCPUToQuota, milliCPUToShares } from '../../src/pod/cpu-shares.js';
import { expand } from '../../src/pod/env-values.js';

const basePod = (): Pod =>
  PodSchema.parse({
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-1', labels: { app: 'web', tier: 'front' }, annotations: { owner: 'team-a' } },
    spec: {
      nodeName: 'node-a',
      serviceAccountName: 'sa',
      terminationGracePeriodSeconds: 30,
      securityContext: { runAsUser: 1000, fsGroup: 2000 },
      initContainers: [{ name: 'setup', image: 'busybox' }],
      containers: [
        {
          name: 'app',
          image: 'nginx:1.25',
          command: ['/bin/sh', '-c'],
          args: ['echo $(GREETING) $(MISSING) $$(GREETING) from $(POD_NAME)'],
          workingDir: '/srv',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '500m', memory: '2Gi' } },
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
            { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
            { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
            { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            { name: 'OWNER', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['owner']" } } },
            { name: 'GREETING', value: 'hello $(POD_NAME) in $(POD_NS)' },
            { name: 'LATER', value: '$(DEFINED_AFTER)' },
            { name: 'DEFINED_AFTER', value: 'x' },
            { name: 'CPU_LIMIT_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
            { name: 'MEM_REQ_MI', valueFrom: { resourceFieldRef: { resource: 'requests.memory', divisor: '1Mi' } } },
          ],
        },
      ],
    },
  });

const opts: ContainerConfigOptions = {
  kind: 'regular',
  restartCount: 3,
  podIP: '10.0.0.5',
  podIPs: ['10.0.0.5', 'fd00::5'],
  nodeName: 'node-a',
  hostIP: '192.168.1.10',
  imageRef: 'sha256:abc',
  memoryCapacityBytes: 8n * 1024n ** 3n,
};

const envOf = (pod: Pod, o: ContainerConfigOptions = opts): Record<string, string> =>
  Object.fromEntries(generateContainerConfig(pod, 0, o).envs!.map((e) => [e.key!, Buffer.from(e.value!).toString('utf8')] as const));

describe('generateContainerConfig: env', () => {
  it('resolves fieldRefs', () => {
    expect(envOf(basePod())).toMatchObject({
      POD_NAME: 'web',
      POD_NS: 'shop',
      POD_UID: 'uid-1',
      NODE: 'node-a',
      SA: 'sa',
      POD_IP: '10.0.0.5',
      POD_IPS: '10.0.0.5,fd00::5',
      HOST_IP: '192.168.1.10',
      APP: 'web',
      OWNER: 'team-a',
    });
  });
  it('expands $(VAR) against earlier variables only; unknown references stay literal', () => {
    const env = envOf(basePod());
    expect(env['GREETING']).toBe('hello web in shop');
    expect(env['LATER']).toBe('$(DEFINED_AFTER)');
  });
  it('resourceFieldRef with divisors, rounded up', () => {
    expect(envOf(basePod())).toMatchObject({ CPU_LIMIT_M: '500', MEM_REQ_MI: '1024' });
  });
  it('resourceFieldRef with the divisor "0" the apiserver defaults, or none, divides by 1', () => {
    const p = basePod();
    p.spec.containers[0].env = [
      { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '0' } } },
      { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'requests.memory' } } },
    ];
    expect(envOf(p)).toMatchObject({ CPU: '1', MEM: String(1024 * 1024 * 1024) });
  });
  it('keeps spec order in the CRI env list', () => {
    expect(
      generateContainerConfig(basePod(), 0, opts)
        .envs!.map((e) => e.key)
        .slice(0, 3),
    ).toEqual(['POD_NAME', 'POD_NS', 'POD_UID']);
  });
  it.each([
    ['secretKeyRef', { secretKeyRef: { name: 's', key: 'k' } }, /container app: env SECRET: secretKeyRef s\/k needs the apiserver/],
    ['configMapKeyRef', { configMapKeyRef: { name: 'cm', key: 'k' } }, /container app: env SECRET: configMapKeyRef cm\/k/],
    ['unknown fieldPath', { fieldRef: { fieldPath: 'spec.bogus' } }, /unsupported fieldRef fieldPath "spec.bogus"/],
  ])('%s throws a KubeletTsError naming container and variable', (_n, valueFrom, msg) => {
    const p = basePod();
    p.spec.containers[0].env = [{ name: 'SECRET', valueFrom }];
    expect(() => generateContainerConfig(p, 0, opts)).toThrow(KubeletTsError);
    expect(() => generateContainerConfig(p, 0, opts)).toThrow(msg);
  });
  it('envFrom without an apiserver names what needs one', () => {
    const p = basePod();
    p.spec.containers[0].envFrom = [{ configMapRef: { name: 'x' } }];
    expect(() => generateContainerConfig(p, 0, opts)).toThrow(/envFrom configmap x needs the apiserver/);
  });
});

describe('generateContainerConfig: env from Secrets and ConfigMaps (upstream makeEnvironmentVariables)', () => {
  const objects = {
    secrets: { db: { password: 'pw', user: 'root' }, gone: null },
    configMaps: { cfg: { MODE: 'prod', 'bad key': 'x', '1st': 'y', LEVEL: 'info' }, nocm: null },
    pullAuths: {},
  };
  const withEnv = (c: Partial<Container>): Pod => {
    const p = basePod();
    p.spec.containers[0] = { ...p.spec.containers[0], args: [], ...c };
    return p;
  };
  const o = { ...opts, objects };
  it.each<[string, Partial<Container>, Record<string, string>]>([
    ['secretKeyRef', { env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] }, { PW: 'pw' }],
    ['configMapKeyRef', { env: [{ name: 'M', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'MODE' } } }] }, { M: 'prod' }],
    [
      'envFrom with a prefix, invalid names skipped, env overrides and expands against it',
      {
        envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'APP_' }, { secretRef: { name: 'db' } }],
        env: [
          { name: 'APP_MODE', value: 'dev' },
          { name: 'DSN', value: '$(user):$(password)@$(APP_LEVEL)' },
        ],
      },
      {
        APP_MODE: 'dev',
        'APP_bad key': undefined as unknown as string,
        APP_1st: 'y',
        APP_LEVEL: 'info',
        user: 'root',
        password: 'pw',
        DSN: 'root:pw@info',
      },
    ],
    [
      'optional missing objects and keys are skipped',
      {
        envFrom: [{ secretRef: { name: 'gone', optional: true } }],
        env: [
          { name: 'A', valueFrom: { secretKeyRef: { name: 'gone', key: 'k', optional: true } } },
          { name: 'B', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nokey', optional: true } } },
          { name: 'C', value: 'c' },
        ],
      },
      { C: 'c' },
    ],
  ])('%s', (_n, c, want) => {
    const env = envOf(withEnv(c), o);
    for (const [k, v] of Object.entries(want)) expect(env[k], k).toBe(v);
    if (_n.startsWith('optional')) expect(Object.keys(env)).toEqual(['C']);
  });
  it.each<[string, Partial<Container>, string]>([
    ['a missing secret', { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'gone', key: 'k' } } }] }, 'secrets "gone" not found'],
    ['a missing configMap in envFrom', { envFrom: [{ configMapRef: { name: 'nocm' } }] }, 'configmaps "nocm" not found'],
    [
      'a missing secret key',
      { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'db', key: 'k' } } }] },
      "couldn't find key k in Secret shop/db",
    ],
    [
      'a missing configMap key',
      { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }] },
      "couldn't find key k in ConfigMap shop/cfg",
    ],
  ])('%s is an error naming it', (_n, c, msg) => {
    expect(() => generateContainerConfig(withEnv(c), 0, o)).toThrow(msg);
  });
});

describe('expand', () => {
  const vars: Record<string, string> = { A: 'a', B: 'b' };
  const look = (n: string) => vars[n];
  it.each([
    ['$(A)-$(B)', 'a-b'],
    ['$$(A)', '$(A)'],
    ['$(C)', '$(C)'],
    ['$(A', '$(A'],
    ['cost $5', 'cost $5'],
    ['trailing $', 'trailing $'],
    ['$$$(A)', '$a'],
    ['', ''],
  ])('%j → %j', (input, out) => expect(expand(input, look)).toBe(out));
});

describe('generateContainerConfig: identity and layout', () => {
  const cfg = generateContainerConfig(basePod(), 0, opts);
  it('metadata, image, command and args (expanded with the full environment)', () => {
    expect(cfg.metadata).toEqual({ name: 'app', attempt: 3 });
    expect(cfg.image).toEqual({ image: 'sha256:abc', userSpecifiedImage: 'nginx:1.25' });
    expect(cfg.command).toEqual(['/bin/sh', '-c']);
    expect(cfg.args).toEqual(['echo hello web in shop $(MISSING) $(GREETING) from web']);
    expect(cfg.workingDir).toBe('/srv');
  });
  it('log path is relative to the sandbox log directory', () => {
    expect(cfg.logPath).toBe('app/3.log');
  });
  it('labels and annotations follow the upstream contract', () => {
    expect(cfg.labels).toEqual({
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': 'uid-1',
      'io.kubernetes.container.name': 'app',
    });
    expect(cfg.annotations).toEqual({
      'io.kubernetes.container.hash': hashContainer(basePod().spec.containers[0]),
      'io.kubernetes.container.restartCount': '3',
      'io.kubernetes.pod.terminationGracePeriod': '30',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.container.ports': '[{"name":"http","containerPort":80,"protocol":"TCP"}]',
      'io.kubernetes.container.type': 'container',
    });
  });
  it('init containers by index', () => {
    const init = generateContainerConfig(basePod(), 0, { ...opts, kind: 'init', restartCount: 0 });
    expect(init.metadata).toEqual({ name: 'setup', attempt: 0 });
    expect(init.annotations!['io.kubernetes.container.type']).toBe('init');
    expect(init.logPath).toBe('setup/0.log');
  });
  it('falls back to the spec image when no imageRef is given', () => {
    expect(generateContainerConfig(basePod(), 0, { ...opts, imageRef: '' }).image!.image).toBe('nginx:1.25');
  });
  it('an out-of-range index throws', () => {
    expect(() => generateContainerConfig(basePod(), 5, opts)).toThrow(RangeError);
  });
});

describe('generateContainerConfig: linux resources (upstream numbers)', () => {
  it('100m request → 102 shares; 500m limit → quota 50000 / period 100000; memory limit in bytes', () => {
    const r = generateContainerConfig(basePod(), 0, opts).linux!.resources!;
    expect(r.cpuShares).toBe(102n);
    expect(r.cpuQuota).toBe(50_000n);
    expect(r.cpuPeriod).toBe(100_000n);
    expect(r.memoryLimitInBytes).toBe(2n * 1024n ** 3n);
    expect(r.oomScoreAdj).toBe(875n); // Burstable: 1000 - 1000*1Gi/8Gi
  });
  it('limit only: shares follow the limit', () => {
    const p = basePod();
    p.spec.containers[0].resources = { limits: { cpu: '250m' } };
    expect(generateContainerConfig(p, 0, opts).linux!.resources!.cpuShares).toBe(256n);
  });
  it('no resources: minimum shares, no quota, BestEffort oom score', () => {
    const p = basePod();
    p.spec.containers[0].resources = {};
    p.spec.containers[0].env = [];
    const r = generateContainerConfig(p, 0, opts).linux!.resources!;
    expect(r).toMatchObject({ cpuShares: 2n, cpuQuota: 0n, cpuPeriod: 100_000n, memoryLimitInBytes: 0n, oomScoreAdj: 1000n });
  });
  it('Guaranteed → oom -997; cpuCFSQuota off → no quota fields', () => {
    const p = basePod();
    const g = { cpu: '1', memory: '1Gi' };
    p.spec.containers[0].resources = { requests: g, limits: g };
    p.spec.initContainers = [];
    const r = generateContainerConfig(p, 0, { ...opts, cpuCFSQuota: false }).linux!.resources!;
    expect(r.oomScoreAdj).toBe(-997n);
    expect(r.cpuShares).toBe(1024n);
    expect(r.cpuQuota).toBeUndefined();
  });
  it.each([
    [0, 2],
    [1, 2],
    [100, 102],
    [1000, 1024],
    [300_000, 262_144],
  ])('milliCPUToShares(%d) = %d', (m, s) => {
    expect(milliCPUToShares(m)).toBe(s);
  });
  it.each([
    [0, 0],
    [5, 1000],
    [500, 50_000],
    [2000, 200_000],
  ])('milliCPUToQuota(%d) = %d', (m, q) => {
    expect(milliCPUToQuota(m, 100_000)).toBe(q);
  });
});

describe('generateContainerConfig: security context', () => {
  it('pod defaults, container overrides, namespaces as the sandbox', () => {
    const p = basePod();
    p.spec.hostNetwork = true;
    p.spec.containers[0].securityContext = {
      privileged: true,
      readOnlyRootFilesystem: true,
      runAsGroup: 7,
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    };
    const sc = generateContainerConfig(p, 0, opts).linux!.securityContext!;
    expect(sc).toMatchObject({
      privileged: true,
      readonlyRootfs: true,
      noNewPrivs: true,
      capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
      namespaceOptions: { network: NamespaceMode.NODE, pid: NamespaceMode.CONTAINER, ipc: NamespaceMode.POD },
      runAsUser: { value: 1000n },
      runAsGroup: { value: 7n },
      supplementalGroups: [2000n],
      seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
      maskedPaths: [...DEFAULT_MASKED_PATHS],
    });
  });
  it('Unconfined seccomp by default; Localhost profiles under the seccomp root', () => {
    const p = basePod();
    expect(generateContainerConfig(p, 0, opts).linux!.securityContext!.seccomp!.profileType).toBe(SecurityProfile_ProfileType.Unconfined);
    p.spec.securityContext!.seccompProfile = { type: 'Localhost', localhostProfile: 'prof.json' };
    expect(generateContainerConfig(p, 0, opts).linux!.securityContext!.seccomp).toEqual({
      profileType: SecurityProfile_ProfileType.Localhost,
      localhostRef: '/var/lib/kubelet/seccomp/prof.json',
    });
  });
  it('procMount Unmasked clears masked and readonly paths', () => {
    const p = basePod();
    p.spec.containers[0].securityContext = { procMount: 'Unmasked' };
    const sc = generateContainerConfig(p, 0, opts).linux!.securityContext!;
    expect(sc.maskedPaths).toEqual([]);
    expect(sc.readonlyPaths).toEqual([]);
  });
  it('the config survives structured clone', () => {
    const cfg = generateContainerConfig(basePod(), 0, opts);
    const back = structuredClone(cfg);
    expect(back.linux).toEqual(cfg.linux);
    expect(Buffer.from(back.envs![0].value!).toString()).toBe('web');
  });
});
