import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CriError } from '../../src/common/errors.js';
import { plan, rotateLogs, rotationSuffix } from '../../src/workers/logs/rotate-logs.js';
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

describe('rotateLogs', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function setup(reopenFails = false) {
    dir = mkdtempSync(join(tmpdir(), 'kts-rotate-'));
    const cri = new FakeCri();
    const logs: Record<string, string> = { big: join(dir, 'big.log'), small: join(dir, 'small.log'), gone: join(dir, 'gone.log') };
    writeFileSync(logs.big, 'x'.repeat(200));
    writeFileSync(logs.small, 'y'.repeat(10));
    writeFileSync(`${logs.big}.20260101-000000`, 'older rotated\n');
    cri.handlers.listContainers = async () => ({ containers: [{ id: 'big' }, { id: 'small' }, { id: 'gone' }] });
    cri.handlers.containerStatus = async (r) => ({ status: { logPath: logs[r.containerId as string] } });
    cri.handlers.reopenContainerLog = async (r) => {
      if (reopenFails) throw new CriError('ReopenContainerLog: rpc error: code = Unknown desc = boom', 'ReopenContainerLog', 2);
      writeFileSync(logs[r.containerId as string], '');
      return {};
    };
    return { cri, logs };
  }

  it('rotates a log at the size limit: older rotated files compressed, the log renamed, then reopened; a missing log is reopened', async () => {
    const { cri, logs } = setup();
    const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 2, nowMs: Date.UTC(2026, 0, 2) });
    expect(r).toEqual({ rotated: [logs.big], errors: [] });
    expect(readdirSync(dir).sort()).toEqual(['big.log', 'big.log.20260101-000000.gz', 'big.log.20260102-000000', 'gone.log', 'small.log']);
    expect(readFileSync(logs.big, 'utf8')).toBe('');
    expect(readFileSync(`${logs.big}.20260102-000000`, 'utf8')).toBe('x'.repeat(200));
    expect(gunzipSync(readFileSync(`${logs.big}.20260101-000000.gz`)).toString()).toBe('older rotated\n');
    expect(
      cri
        .callsOf('reopenContainerLog')
        .map((c) => c.containerId)
        .sort(),
    ).toEqual(['big', 'gone']);
  });

  it('a failed reopen undoes the rename, so the next round retries', async () => {
    const { cri, logs } = setup(true);
    const r = await rotateLogs(cri.api, { maxSizeBytes: 100, maxFiles: 5, workers: 1, nowMs: Date.UTC(2026, 0, 2) });
    expect(r.rotated).toEqual([]);
    expect(r.errors.some((e) => e.includes('failed to reopen container log "big"'))).toBe(true);
    expect(readFileSync(logs.big, 'utf8')).toBe('x'.repeat(200));
    expect(existsSync(`${logs.big}.20260102-000000`)).toBe(false);
  });
});
