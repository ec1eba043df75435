import { mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  containerIdOfLink,
  danglingLinks,
  legacyLogLinkPath,
  linkContainerLog,
  unlinkContainerLog,
} from '../../src/workers/logs/legacy-log-link.js';

describe('legacy container log links', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['web', 'default', 'nginx', 'abc123', '/var/log/containers/web_default_nginx-abc123.log'],
    ['a'.repeat(300), 'ns', 'c', 'id', `/var/log/containers/${`${'a'.repeat(300)}_ns_c-id`.slice(0, 251)}.log`],
  ])('%s/%s/%s names its link as upstream', (pod, ns, container, id, expected) => {
    const path = legacyLogLinkPath('/var/log/containers', pod, ns, container, id);
    expect(path).toBe(expected);
    expect(path.split('/').pop()!.length).toBeLessThanOrEqual(255);
  });

  it.each([
    ['web_default_nginx-0123abcd.log', '0123abcd'],
    ['web-1_default_my-app-ff00.log', 'ff00'],
    ['no-suffix', undefined],
    ['trailing-.log', undefined],
  ])('the container ID of %s is %s', (name, id) => {
    expect(containerIdOfLink(name)).toBe(id);
  });

  it('links, replaces, finds dangling links and unlinks', async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-links-'));
    const links = join(dir, 'containers');
    const log0 = join(dir, '0.log');
    const log1 = join(dir, '1.log');
    writeFileSync(log0, 'x');
    writeFileSync(log1, 'y');
    const link = legacyLogLinkPath(links, 'web', 'default', 'app', 'aaa');
    linkContainerLog(link, log0, links);
    linkContainerLog(link, log1, links);
    expect(readlinkSync(link)).toBe(log1);
    symlinkSync(join(dir, 'gone.log'), join(links, 'old_default_app-bbb.log'));
    writeFileSync(join(links, 'plain_default_app-ccc.log'), 'not a link');
    expect(danglingLinks(links)).toEqual([{ path: join(links, 'old_default_app-bbb.log'), containerId: 'bbb' }]);
    unlinkContainerLog(link);
    unlinkContainerLog(link);
    expect(danglingLinks(join(dir, 'missing'))).toEqual([]);
  });
});
