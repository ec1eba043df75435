import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriError } from '../../src/common/errors.js';
import { ContainerStatus } from '../../src/gen/runtime/v1/api.js';
import { toContainerStatus } from '../../src/runtime/convert.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import { buildPodLogsDirectory, containerLogPath } from '../../src/pod/log-paths.js';
import { containerAnnotations, containerLabels } from '../../src/workers/sync/container-config.js';
import {
  derivedLogPath,
  plan,
  rotateLogs,
  rotationSuffix,
  runningContainers,
  type RotationCandidate,
} from '../../src/workers/logs/rotate-logs.js';
import { FakeCri } from '../fakes/fake-cri.js';
import { BUSYBOX, container, makePod, podStatus } from '../helpers/sync-fixtures.js';

describe('rotation plan (upstream cleanupUnusedLogs + removeExcessLogs)', () => {
  it.each([
    [['0.log.1', '0.log.2'], 5, [], ['0.log.1', '0.log.2']],
    [['0.log.1.gz', '0.log.2.gz', '0.log.3.gz', '0.log.4'], 5, ['0.log.1.gz'], ['0.log.2.gz', '0.log.3.gz', '0.log.4']],
    [['0.log.1', '0.log.1.gz', '0.log.2.gz.tmp'], 5, ['0.log.1', '0.log.2.gz.tmp'], ['0.log.1.gz']],
    [['0.log.1.gz', '0.log.2'], 2, ['0.log.1.gz', '0.log.2'], []],
  ])('%j, max %s files → remove %j, keep %j', (files, max, remove, keep) => {
    expect(plan(files, max)).toEqual({ remove, keep });
  });
  it('suffix is Go 20060102-150405 in UTC', () => expect(rotationSuffix(Date.UTC(2026, 10, 2, 3, 4, 5))).toBe('20261102-030405'));
});

describe('derivedLogPath (sandbox logDirectory + container logPath from the cached status)', () => {
  const c = { podName: 'web', podNamespace: 'default', podUid: 'u-1', containerName: 'app', restartCount: 3 };

  it('is <podLogsDir>/<ns>_<name>_<uid>/<container>/<restartCount>.log', () =>
    expect(derivedLogPath('/var/log/pods', c)).toBe('/var/log/pods/default_web_u-1/app/3.log'));

  it('matches the path the kubelet gives a container it creates, as an inspection caches it', () => {
    const pod: Pod = { metadata: { name: 'web', namespace: 'ns1', uid: 'a-b-c' }, spec: { containers: [{ name: 'app', image: 'x' }] } };
    const spec = pod.spec.containers[0];
    // The runtime's ContainerStatus of that container: the kubelet's labels and annotations, its metadata.
    const cached = toContainerStatus(
      ContainerStatus.fromPartial({
        id: 'c1',
        metadata: { name: 'app', attempt: 7 },
        labels: containerLabels(pod, spec),
        annotations: containerAnnotations(pod, spec, 7, 'regular'),
      }),
      's1',
    );
    const candidate = {
      podName: 'web',
      podNamespace: 'ns1',
      podUid: 'a-b-c',
      containerName: cached.name,
      restartCount: cached.restartCount,
    };
    expect(derivedLogPath('/logs/', candidate)).toBe(posix.join(buildPodLogsDirectory('/logs/', pod), containerLogPath('app', 7)));
  });

  it.each<[string, Partial<typeof c> & { podLogsDir?: string }]>([
    ['empty pod name', { podName: '' }],
    ['empty pod namespace', { podNamespace: '' }],
    ['empty pod uid', { podUid: '' }],
    ['empty container name', { containerName: '' }],
    ['a slash in the namespace', { podNamespace: 'a/b' }],
    ['a NUL in the uid', { podUid: 'u\0' }],
    ['container name ..', { containerName: '..' }],
    ['container name .', { containerName: '.' }],
    ['container name with a slash', { containerName: '../x' }],
    ['negative restartCount', { restartCount: -1 }],
    ['fractional restartCount', { restartCount: 1.5 }],
    ['restartCount beyond a safe integer', { restartCount: 2 ** 60 }],
    ['empty podLogsDir', { podLogsDir: '' }],
  ])('%s → undefined (ContainerStatus fallback)', (_, m) => {
    const { podLogsDir = '/var/log/pods', ...patch } = m;
    expect(derivedLogPath(podLogsDir, { ...c, ...patch })).toBe(undefined);
  });
});

describe('runningContainers (from the pod status cache, not ListContainers)', () => {
  it('lists the running containers of every cached pod with their pod; exited and created ones, and free slots, are skipped', () => {
    const cache = PodStatusCache.create({ capacity: 4 });
    const a = makePod({ containers: [{ name: 'app', image: BUSYBOX }] }, 'a');
    const b = makePod({ containers: [{ name: 'side', image: BUSYBOX }], initContainers: [{ name: 'init', image: BUSYBOX }] }, 'b');
    const running = container(a, 'app', 'running', { restartCount: 2 });
    const side = container(b, 'side', 'running');
    cache.write(cache.allocate('uid-a'), podStatus(a, [], [running, container(a, 'app', 'exited', { restartCount: 1 })]));
    cache.allocate('uid-x'); // no status yet
    cache.write(cache.allocate('uid-b'), podStatus(b, [], [side, container(b, 'init', 'created')]));
    cache.allocate('uid-y');
    cache.free('uid-y');
    expect(runningContainers(cache)).toEqual([
      { id: running.id, podName: 'a', podNamespace: 'default', podUid: 'uid-a', containerName: 'app', restartCount: 2 },
      { id: side.id, podName: 'b', podNamespace: 'default', podUid: 'uid-b', containerName: 'side', restartCount: 0 },
    ]);
  });
});

describe('rotateLogs', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const nowMs = Date.UTC(2026, 0, 2);

  /**
   * Three running containers of pod default/web (uid u1) with logs where a
   * kubelet puts them: big (over the limit, with an older rotated file),
   * small, and gone (its log is missing). `labelled`: the cached statuses
   * hold their pod and names; otherwise none, and every path comes from ContainerStatus.
   */
  function setup(opts: { labelled: boolean; reopenFails?: boolean }) {
    dir = mkdtempSync(join(tmpdir(), 'kts-rotate-'));
    const cri = new FakeCri();
    const counts: Record<string, number> = { big: 0, small: 2, gone: 1 };
    const logs: Record<string, string> = {};
    for (const [name, n] of Object.entries(counts)) {
      logs[name] = join(dir, 'default_web_u1', name, `${n}.log`);
      mkdirSync(dirname(logs[name]), { recursive: true });
    }
    writeFileSync(logs.big, 'x'.repeat(200));
    writeFileSync(logs.small, 'y'.repeat(10));
    writeFileSync(`${logs.big}.20260101-000000`, 'older rotated\n');
    const running: RotationCandidate[] = Object.entries(counts).map(([name, n]) =>
      opts.labelled
        ? { id: name, podName: 'web', podNamespace: 'default', podUid: 'u1', containerName: name, restartCount: n }
        : { id: name, podName: '', podNamespace: '', podUid: '', containerName: '', restartCount: 0 },
    );
    cri.handlers.containerStatus = async (r) => ({ status: { logPath: logs[r.containerId as string] } });
    cri.handlers.reopenContainerLog = async (r) => {
      if (opts.reopenFails) throw new CriError('ReopenContainerLog: rpc error: code = Unknown desc = boom', 'ReopenContainerLog', 2);
      writeFileSync(logs[r.containerId as string], '');
      return {};
    };
    return { cri, logs, running };
  }
  const ids = (cri: FakeCri, method: 'containerStatus' | 'reopenContainerLog') =>
    cri
      .callsOf(method)
      .map((c) => c.containerId)
      .sort();

  it.each([
    // Derived: only the container whose derived log is missing (ENOENT) is asked for its path.
    { labelled: true, statusReads: ['gone'] },
    { labelled: false, statusReads: ['big', 'gone', 'small'] },
  ])(
    'labelled $labelled: a log at the size limit is rotated (older files compressed, renamed, reopened), a missing one reopened; ContainerStatus for $statusReads',
    async ({ labelled, statusReads }) => {
      const { cri, logs, running } = setup({ labelled });
      const r = await rotateLogs(cri.api, running, { maxSizeBytes: 100, maxFiles: 5, workers: 2, nowMs, podLogsDir: dir });
      expect(r).toEqual({ rotated: [logs.big], errors: [], statusReads: statusReads.length });
      expect(ids(cri, 'containerStatus')).toEqual(statusReads);
      expect(readdirSync(dirname(logs.big)).sort()).toEqual(['0.log', '0.log.20260101-000000.gz', '0.log.20260102-000000']);
      expect(readdirSync(dirname(logs.small))).toEqual(['2.log']);
      expect(readdirSync(dirname(logs.gone))).toEqual(['1.log']);
      expect(readFileSync(logs.big, 'utf8')).toBe('');
      expect(readFileSync(`${logs.big}.20260102-000000`, 'utf8')).toBe('x'.repeat(200));
      expect(gunzipSync(readFileSync(`${logs.big}.20260101-000000.gz`)).toString()).toBe('older rotated\n');
      expect(ids(cri, 'reopenContainerLog')).toEqual(['big', 'gone']);
    },
  );

  it('with every derived log present, no ContainerStatus call is made', async () => {
    const { cri, logs, running } = setup({ labelled: true });
    writeFileSync(logs.gone, 'z');
    const r = await rotateLogs(cri.api, running, { maxSizeBytes: 100, maxFiles: 5, workers: 2, nowMs, podLogsDir: dir });
    expect(r).toEqual({ rotated: [logs.big], errors: [], statusReads: 0 });
    expect(cri.methods().sort()).toEqual(['reopenContainerLog']);
  });

  it('a derived path that does not exist falls back to the path ContainerStatus reports (another podLogsDir)', async () => {
    const { cri, logs, running } = setup({ labelled: true });
    writeFileSync(logs.gone, 'z');
    const r = await rotateLogs(cri.api, running, { maxSizeBytes: 100, maxFiles: 5, workers: 1, nowMs, podLogsDir: join(dir, 'elsewhere') });
    expect(r).toEqual({ rotated: [logs.big], errors: [], statusReads: 3 });
    expect(ids(cri, 'containerStatus')).toEqual(['big', 'gone', 'small']);
    expect(existsSync(`${logs.big}.20260102-000000`)).toBe(true);
  });

  it.each([true, false])('labelled %s: a failed reopen undoes the rename, so the next round retries', async (labelled) => {
    const { cri, logs, running } = setup({ labelled, reopenFails: true });
    const r = await rotateLogs(cri.api, running, { maxSizeBytes: 100, maxFiles: 5, workers: 1, nowMs, podLogsDir: dir });
    expect(r.rotated).toEqual([]);
    expect(r.errors.some((e) => e.includes('failed to reopen container log "big"'))).toBe(true);
    expect(readFileSync(logs.big, 'utf8')).toBe('x'.repeat(200));
    expect(existsSync(`${logs.big}.20260102-000000`)).toBe(false);
  });
});
