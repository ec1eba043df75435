import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriError } from '../../src/common/errors.js';
import {
  ANNOTATION_RESTART_COUNT,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
} from '../../src/runtime/types.js';
import { buildPodLogsDirectory, containerLogPath } from '../../src/pod/log-paths.js';
import { containerAnnotations, containerLabels } from '../../src/workers/sync/container-config.js';
import { derivedLogPath, plan, rotateLogs, rotationSuffix } from '../../src/workers/logs/rotate-logs.js';
import { FakeCri } from '../fakes/fake-cri.js';

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

describe('derivedLogPath (sandbox logDirectory + container logPath from the listed labels)', () => {
  const labels = { [LABEL_POD_NAME]: 'web', [LABEL_POD_NAMESPACE]: 'default', [LABEL_POD_UID]: 'u-1', [LABEL_CONTAINER_NAME]: 'app' };
  const annotations = { [ANNOTATION_RESTART_COUNT]: '3' };

  it('is <podLogsDir>/<ns>_<name>_<uid>/<container>/<restartCount>.log', () =>
    expect(derivedLogPath('/var/log/pods', { labels, annotations })).toBe('/var/log/pods/default_web_u-1/app/3.log'));

  it('matches the paths the kubelet gives a container it creates (labels, annotations, logDirectory, logPath)', () => {
    const pod: Pod = { metadata: { name: 'web', namespace: 'ns1', uid: 'a-b-c' }, spec: { containers: [{ name: 'app', image: 'x' }] } };
    const c = pod.spec.containers[0];
    expect(derivedLogPath('/logs/', { labels: containerLabels(pod, c), annotations: containerAnnotations(pod, c, 7, 'regular') })).toBe(
      posix.join(buildPodLogsDirectory('/logs/', pod), containerLogPath('app', 7)),
    );
  });

  type Mutation = { labels?: Record<string, string | undefined>; annotations?: Record<string, string | undefined>; podLogsDir?: string };
  it.each<[string, Mutation]>([
    ['no pod name', { labels: { [LABEL_POD_NAME]: undefined } }],
    ['no pod namespace', { labels: { [LABEL_POD_NAMESPACE]: undefined } }],
    ['no pod uid', { labels: { [LABEL_POD_UID]: undefined } }],
    ['no container name', { labels: { [LABEL_CONTAINER_NAME]: undefined } }],
    ['no restartCount', { annotations: { [ANNOTATION_RESTART_COUNT]: undefined } }],
    ['empty pod name', { labels: { [LABEL_POD_NAME]: '' } }],
    ['a slash in the namespace', { labels: { [LABEL_POD_NAMESPACE]: 'a/b' } }],
    ['a NUL in the uid', { labels: { [LABEL_POD_UID]: 'u\0' } }],
    ['container name ..', { labels: { [LABEL_CONTAINER_NAME]: '..' } }],
    ['container name .', { labels: { [LABEL_CONTAINER_NAME]: '.' } }],
    ['container name with a slash', { labels: { [LABEL_CONTAINER_NAME]: '../x' } }],
    ['empty restartCount', { annotations: { [ANNOTATION_RESTART_COUNT]: '' } }],
    ['negative restartCount', { annotations: { [ANNOTATION_RESTART_COUNT]: '-1' } }],
    ['leading zero', { annotations: { [ANNOTATION_RESTART_COUNT]: '01' } }],
    ['fractional', { annotations: { [ANNOTATION_RESTART_COUNT]: '1.5' } }],
    ['exponent', { annotations: { [ANNOTATION_RESTART_COUNT]: '1e3' } }],
    ['spaces', { annotations: { [ANNOTATION_RESTART_COUNT]: ' 1' } }],
    ['not a number', { annotations: { [ANNOTATION_RESTART_COUNT]: 'abc' } }],
    ['beyond a safe integer', { annotations: { [ANNOTATION_RESTART_COUNT]: '99999999999999999999' } }],
    ['empty podLogsDir', { podLogsDir: '' }],
  ])('%s → undefined (ContainerStatus fallback)', (_, m) => {
    const drop = (base: Record<string, string>, patch: Record<string, string | undefined> = {}) => {
      const out: Record<string, string> = { ...base };
      for (const [k, v] of Object.entries(patch))
        if (v === undefined) delete out[k];
        else out[k] = v;
      return out;
    };
    expect(
      derivedLogPath(m.podLogsDir ?? '/var/log/pods', { labels: drop(labels, m.labels), annotations: drop(annotations, m.annotations) }),
    ).toBe(undefined);
  });
});

describe('rotateLogs', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const nowMs = Date.UTC(2026, 0, 2);

  /**
   * Three running containers of pod default/web (uid u1) with logs where a
   * kubelet puts them: big (over the limit, with an older rotated file),
   * small, and gone (its log is missing). `labelled`: ListContainers returns
   * the kubelet's labels; otherwise none, and every path comes from ContainerStatus.
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
    cri.handlers.listContainers = async () => ({
      containers: Object.entries(counts).map(([name, n]) => ({
        id: name,
        labels: opts.labelled
          ? { [LABEL_POD_NAME]: 'web', [LABEL_POD_NAMESPACE]: 'default', [LABEL_POD_UID]: 'u1', [LABEL_CONTAINER_NAME]: name }
          : {},
        annotations: opts.labelled ? { [ANNOTATION_RESTART_COUNT]: String(n) } : {},
      })),
    });
    cri.handlers.containerStatus = async (r) => ({ status: { logPath: logs[r.containerId as string] } });
    cri.handlers.reopenContainerLog = async (r) => {
      if (opts.reopenFails) throw new CriError('ReopenContainerLog: rpc error: code = Unknown desc = boom', 'ReopenContainerLog', 2);
      writeFileSync(logs[r.containerId as string], '');
      return {};
    };
    return { cri, logs };
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
      const { cri, logs } = setup({ labelled });
      const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 2, nowMs, podLogsDir: dir });
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
    const { cri, logs } = setup({ labelled: true });
    writeFileSync(logs.gone, 'z');
    const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 2, nowMs, podLogsDir: dir });
    expect(r).toEqual({ rotated: [logs.big], errors: [], statusReads: 0 });
    expect(cri.methods().sort()).toEqual(['listContainers', 'reopenContainerLog']);
  });

  it('a derived path that does not exist falls back to the path ContainerStatus reports (another podLogsDir)', async () => {
    const { cri, logs } = setup({ labelled: true });
    writeFileSync(logs.gone, 'z');
    const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 1, nowMs, podLogsDir: join(dir, 'elsewhere') });
    expect(r).toEqual({ rotated: [logs.big], errors: [], statusReads: 3 });
    expect(ids(cri, 'containerStatus')).toEqual(['big', 'gone', 'small']);
    expect(existsSync(`${logs.big}.20260102-000000`)).toBe(true);
  });

  it.each([true, false])('labelled %s: a failed reopen undoes the rename, so the next round retries', async (labelled) => {
    const { cri, logs } = setup({ labelled, reopenFails: true });
    const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 1, nowMs, podLogsDir: dir });
    expect(r.rotated).toEqual([]);
    expect(r.errors.some((e) => e.includes('failed to reopen container log "big"'))).toBe(true);
    expect(readFileSync(logs.big, 'utf8')).toBe('x'.repeat(200));
    expect(existsSync(`${logs.big}.20260102-000000`)).toBe(false);
  });
});
