import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { sdNotify } from '../../src/main/sd-notify.js';

describe('sdNotify', () => {
  const calls: [string, string[]][] = [];
  const exec = (file: string, args: string[]) => (calls.push([file, args]), Promise.resolve());

  it.each<[string, 'READY=1' | 'STOPPING=1', NodeJS.ProcessEnv, [string, string[]][], boolean]>([
    ['not under systemd: nothing', 'READY=1', {}, [], false],
    ['READY=1', 'READY=1', { NOTIFY_SOCKET: '/run/systemd/notify' }, [['systemd-notify', ['--ready', '--pid=42']]], true],
    ['STOPPING=1', 'STOPPING=1', { NOTIFY_SOCKET: '/run/systemd/notify' }, [['systemd-notify', ['--pid=42', 'STOPPING=1']]], true],
  ])('%s', async (_name, state, env, expected, sent) => {
    calls.length = 0;
    expect(await sdNotify(state, silentLogger(), env, exec, 42)).toBe(sent);
    expect(calls).toEqual(expected);
  });

  it('a failure is reported, not thrown', async () => {
    const failing = () => Promise.reject(new Error('ENOENT'));
    expect(await sdNotify('READY=1', silentLogger(), { NOTIFY_SOCKET: '@x' }, failing, 1)).toBe(false);
  });
});
