/**
 * Volumes and pod directories on real containerd, with static pods (issue 9):
 * emptyDir on disk and in memory, hostPath, downwardAPI, subPath checks, the
 * managed /etc/hosts and termination messages; pod directories and mounts
 * removed with the pod; a SIGKILLed agent restarted mounts nothing twice and
 * leaks nothing.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { LinuxMounter } from '../../src/common/mounter.js';
import { AgentProcess } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface C {
  name: string;
  command: string[];
  volumeMounts?: Record<string, unknown>[];
  [k: string]: unknown;
}

describeE2E('volumes on containerd (static pods)', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-vol-${run}`;
  let agent: AgentProcess;

  const manifest = (name: string, containers: C[], volumes: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name, run } },
    spec: {
      terminationGracePeriodSeconds: 2,
      containers: containers.map((c) => ({ image: IMAGE, ...c })),
      volumes,
      ...extra,
    },
  });
  const cs = (pod: Pod | undefined, name: string) =>
    [...(pod?.status?.containerStatuses ?? []), ...(pod?.status?.initContainerStatuses ?? [])].find((c) => c.name === name);
  const running = (name: string, container = 'app') => agent.waitPod('running', name, (p) => cs(p, container)?.state?.running && p);
  const podDir = (uid: string) => join(agent.dir, 'root/pods', uid);
  const logOf = (pod: Pod, container: string) => {
    const dir = join(agent.dir, 'pod-logs', `${ns}_${pod.metadata.name}_${pod.metadata.uid}`, container);
    return readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('');
  };

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns, ['--v=3']);
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
  });

  // First, while nothing is mounted below the root directory yet: the agent binds it onto itself (rshared) on the first demand.
  it('mountPropagation HostToContainer: a mount made on the node below the volume later appears in the container', async () => {
    agent.writeManifest(
      'prop',
      manifest(
        'prop',
        [
          {
            name: 'app',
            command: ['sh', '-c', 'while true; do grep -q " /shared/late " /proc/mounts && echo seen-late-mount; sleep 1; done'],
            volumeMounts: [{ name: 'shared', mountPath: '/shared', mountPropagation: 'HostToContainer' }],
          },
        ],
        [{ name: 'shared', emptyDir: {} }],
      ),
    );
    const pod = await running('prop');
    const late = join(podDir(pod.metadata.uid!), 'volumes/kubernetes.io~empty-dir/shared/late');
    mkdirSync(late);
    const mounter = new LinuxMounter();
    await mounter.mount('tmpfs', late, 'tmpfs', ['size=1m']);
    try {
      await agent.until('the container to see the mount', () => logOf(pod, 'app').includes('seen-late-mount'), 30_000);
    } finally {
      await mounter.unmount(late);
    }
    agent.deleteManifest('prop');
  });

  it('an init container writes an emptyDir that the main container reads', async () => {
    agent.writeManifest(
      'handoff',
      manifest(
        'handoff',
        [{ name: 'app', command: ['sh', '-c', 'cat /work/msg; sleep 3600'], volumeMounts: [{ name: 'work', mountPath: '/work' }] }],
        [{ name: 'work', emptyDir: {} }],
        {
          initContainers: [
            {
              name: 'writer',
              image: IMAGE,
              command: ['sh', '-c', `echo written-by-init-${run} > /work/msg`],
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            },
          ],
        },
      ),
    );
    const pod = await running('handoff');
    expect(cs(pod, 'writer')?.state?.terminated?.exitCode).toBe(0);
    await agent.until('the reader to print the message', () => logOf(pod, 'app').includes(`written-by-init-${run}`), 30_000);
    const dir = join(podDir(pod.metadata.uid!), 'volumes/kubernetes.io~empty-dir/work');
    expect(readFileSync(join(dir, 'msg'), 'utf8')).toBe(`written-by-init-${run}\n`);
    expect(statSync(dir).mode & 0o777).toBe(0o777);
  });

  it('a Memory emptyDir is a tmpfs of its sizeLimit inside the container; downwardAPI files and the managed /etc/hosts are there too', async () => {
    agent.writeManifest(
      'mem',
      manifest(
        'mem',
        [
          {
            name: 'app',
            command: [
              'sh',
              '-c',
              'grep " /mem " /proc/mounts; echo labels:; cat /info/labels; echo; echo hosts:; cat /etc/hosts; sleep 3600',
            ],
            volumeMounts: [
              { name: 'mem', mountPath: '/mem' },
              { name: 'info', mountPath: '/info' },
            ],
          },
        ],
        [
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '32Mi' } },
          { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        ],
      ),
    );
    const pod = await running('mem');
    const log = await agent.until(
      'the container output',
      () => (logOf(pod, 'app').includes('hosts:') && logOf(pod, 'app').includes('allrouters') ? logOf(pod, 'app') : undefined),
      30_000,
    );
    expect(log).toMatch(/tmpfs \/mem tmpfs rw[^ ]*size=32768k/);
    expect(log).toContain(`app="mem"`);
    expect(log).toContain(`run="${run}"`);
    expect(log).toContain('# Kubernetes-managed hosts file.');
    expect(log).toMatch(new RegExp(`${pod.status!.podIP!.replaceAll('.', '\\.')}\\s+mem-${agent.nodeName}`));
    // On the node: the tmpfs is mounted at the volume directory, once.
    const volDir = join(podDir(pod.metadata.uid!), 'volumes/kubernetes.io~empty-dir/mem');
    expect(agent.mounts().filter((m) => m === volDir)).toHaveLength(1);
  });

  it('hostPath DirectoryOrCreate creates the directory; the container writes into it', async () => {
    const hostDir = join(agent.dir, `host-${run}/created/deep`);
    agent.writeManifest(
      'hostpath',
      manifest(
        'hostpath',
        [
          {
            name: 'app',
            command: ['sh', '-c', 'echo from-container > /host/file; sleep 3600'],
            volumeMounts: [{ name: 'h', mountPath: '/host' }],
          },
        ],
        [{ name: 'h', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } }],
      ),
    );
    await running('hostpath');
    expect(statSync(hostDir).isDirectory()).toBe(true);
    expect(statSync(hostDir).mode & 0o777).toBe(0o755);
    await agent.until('the file from the container', () => existsSync(join(hostDir, 'file')), 30_000);
    expect(readFileSync(join(hostDir, 'file'), 'utf8')).toBe('from-container\n');
  });

  it('a subPath escaping its volume through a symlink is refused with a clear status; the other pods run on', async () => {
    agent.writeManifest(
      'escape',
      manifest(
        'escape',
        [
          {
            name: 'app',
            command: ['sh', '-c', 'ls /escaped; sleep 3600'],
            volumeMounts: [{ name: 'data', mountPath: '/escaped', subPath: 'evil' }],
          },
          { name: 'fine', command: ['sh', '-c', 'sleep 3600'], volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'ok' }] },
        ],
        [{ name: 'data', emptyDir: {} }],
        {
          initContainers: [
            {
              name: 'plant',
              image: IMAGE,
              command: ['sh', '-c', 'ln -s /etc /data/evil; mkdir -p /data/ok'],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
        },
      ),
    );
    const pod = await agent.waitPod(
      'CreateContainerConfigError',
      'escape',
      (p) => cs(p, 'app')?.state?.waiting?.reason === 'CreateContainerConfigError' && p,
    );
    const waiting = cs(pod, 'app')!.state!.waiting!;
    // upstream makeMounts: the status names the volumeMount only; the host paths go to the agent's log.
    expect(waiting.message).toBe('failed to prepare subPath for volumeMount "data" of container "app"');
    await agent.until('the subPath detail in the agent log', () =>
      agent.logs
        .map((l) => l.replaceAll('\\"', '"'))
        .some((l) => /subpath "\/etc" not within volume path ".*\/volumes\/kubernetes\.io~empty-dir\/data"/.test(l)),
    );
    // The same pod's other container, with a subPath inside the volume, runs.
    await running('escape', 'fine');
    const binds = agent.mounts().filter((m) => m.includes(`/${pod.metadata.uid}/volume-subpaths/`));
    expect(binds).toEqual([join(podDir(pod.metadata.uid!), 'volume-subpaths/data/fine/0')]);
    // The other pods are untouched.
    for (const name of ['handoff', 'mem', 'hostpath']) expect(cs(await agent.pod(name), 'app')?.state?.running).toBeTruthy();
  });

  it('a manifest with a ".." subPath is rejected by validation, named in the log, and starts nothing', async () => {
    agent.writeManifest(
      'dotdot',
      manifest(
        'dotdot',
        [{ name: 'app', command: ['sleep', '3600'], volumeMounts: [{ name: 'data', mountPath: '/d', subPath: '../../etc' }] }],
        [{ name: 'data', emptyDir: {} }],
      ),
    );
    await agent.until(
      'the validation error in the log',
      () =>
        agent.logs.some(
          (l) =>
            l.includes(`subPath: Invalid value: \\"../../etc\\": must not contain '..'`) ||
            l.includes(`subPath: Invalid value: "../../etc": must not contain '..'`),
        ),
      30_000,
    );
    expect(await agent.pod('dotdot')).toBeUndefined();
    agent.deleteManifest('dotdot');
  });

  it('termination messages: the file the container wrote, or with FallbackToLogsOnError the end of its log', async () => {
    agent.writeManifest(
      'tmsg',
      manifest(
        'tmsg',
        [
          { name: 'app', command: ['sh', '-c', 'echo "bye: disk full" > /dev/termination-log; exit 3'] },
          {
            name: 'logger',
            terminationMessagePolicy: 'FallbackToLogsOnError',
            command: ['sh', '-c', 'echo first; echo last-words; exit 4'],
          },
        ],
        [],
        { restartPolicy: 'Never' },
      ),
    );
    const pod = await agent.waitPod('phase Failed', 'tmsg', (p) => p.status?.phase === 'Failed' && p);
    expect(cs(pod, 'app')?.state?.terminated).toMatchObject({ exitCode: 3, message: 'bye: disk full\n' });
    expect(cs(pod, 'logger')?.state?.terminated).toMatchObject({ exitCode: 4, message: 'first\nlast-words\n' });
  });

  it('standalone, a configMap volume cannot be set up: the pod waits in ContainerCreating with the reason logged; the others run on', async () => {
    agent.writeManifest(
      'needs-api',
      manifest(
        'needs-api',
        [{ name: 'app', command: ['sleep', '3600'], volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
        [{ name: 'cfg', configMap: { name: 'x' } }],
      ),
    );
    await agent.until(
      'the FailedMount reason in the log',
      () => agent.logs.some((l) => l.includes('FailedMount') && l.includes('configMap volumes need the apiserver')),
      30_000,
    );
    const pod = await agent.pod('needs-api');
    expect(pod?.status?.phase).toBe('Pending');
    expect(cs(pod, 'app')?.state?.waiting?.reason).toBe('ContainerCreating');
    expect(cs(await agent.pod('handoff'), 'app')?.state?.running).toBeTruthy();
    agent.deleteManifest('needs-api');
  });

  it('a deleted pod leaves no directory and no mount behind', async () => {
    const pod = (await agent.pod('mem'))!;
    const uid = pod.metadata.uid!;
    expect(agent.mounts().some((m) => m.includes(uid))).toBe(true);
    agent.deleteManifest('mem');
    await agent.until('the pod directory removed', () => !existsSync(podDir(uid)), 90_000);
    expect(agent.mounts().filter((m) => m.includes(uid))).toEqual([]);
    expect(await agent.pod('mem')).toBeUndefined();
  });

  it('after SIGKILL and a restart nothing is mounted twice, and pods deleted meanwhile leave nothing behind', async () => {
    const handoff = (await agent.pod('handoff'))!;
    const escape = (await agent.pod('escape'))!;
    agent.writeManifest(
      'secret-like',
      manifest(
        'secret-like',
        [
          {
            name: 'app',
            command: ['sleep', '3600'],
            volumeMounts: [
              { name: 'm', mountPath: '/m' },
              { name: 'info', mountPath: '/info' },
            ],
          },
        ],
        [
          { name: 'm', emptyDir: { medium: 'Memory' } },
          { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
        ],
      ),
    );
    const kept = await running('secret-like');
    const before = agent.mounts().sort();
    expect(before.filter((m) => m.includes(kept.metadata.uid!))).toHaveLength(2);

    await agent.stop('SIGKILL');
    // While the agent is down, one pod is deleted.
    agent.deleteManifest('escape');
    const logsBefore = agent.logs.length;
    await agent.start();
    await agent.until(
      'the restarted agent to report the kept pods running',
      async () => {
        const pods = await agent.pods();
        return ['handoff', 'hostpath', 'secret-like'].every(
          (n) =>
            cs(
              pods.find((p) => p.metadata.name === `${n}-${agent.nodeName}`),
              'app',
            )?.state?.running,
        );
      },
      90_000,
    );
    await agent.until('the deleted pod’s directory removed', () => !existsSync(podDir(escape.metadata.uid!)), 120_000);
    const after = agent.mounts().sort();
    expect(after).toEqual(before.filter((m) => !m.includes(escape.metadata.uid!)));
    expect(new Set(after).size).toBe(after.length);
    // The restarted agent set the kept pod's volumes up again (idempotently) and mounted nothing twice.
    await agent.until(
      'the restarted agent to set up the kept pod’s volumes',
      () =>
        ['m', 'info'].every((v) =>
          agent.logs.slice(logsBefore).some((l) => l.includes(`SetUp succeeded for volume \\"${v}\\"`) && l.includes(kept.metadata.uid!)),
        ),
      60_000,
    );
    expect(agent.mounts().sort()).toEqual(after);
    expect(cs(await agent.pod('handoff'), 'app')?.restartCount).toBe(cs(handoff, 'app')?.restartCount);
  });
});
