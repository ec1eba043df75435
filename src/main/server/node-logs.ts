/**
 * GET /logs/… : the node's log directory (upstream serves /var/log/ with
 * http.FileServer). A directory lists its entries (directories with a
 * trailing slash) in Go's FileServer HTML; a file is sent as is. The path is
 * cleaned before routing (kubelet-server.ts), and the resolved file must stay
 * inside the directory, symbolic links included: nothing outside is served.
 */
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join, relative, sep } from 'node:path';

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');

function notFound(res: ServerResponse): void {
  res.statusCode = 404;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end('404 page not found\n');
}

/** `rel` is the cleaned path below /logs/ ('' for the directory itself), without a leading slash. */
export async function serveNodeLogs(root: string, rel: string, trailingSlash: boolean, res: ServerResponse): Promise<void> {
  let realRoot: string;
  let target: string;
  try {
    realRoot = await realpath(root);
    target = await realpath(join(realRoot, rel));
  } catch {
    return notFound(res);
  }
  const inside = relative(realRoot, target);
  if (inside.startsWith('..') || inside.startsWith(sep) || inside === '..') return notFound(res);
  const st = await stat(target).catch(() => undefined);
  if (!st) return notFound(res);
  if (st.isDirectory()) {
    if (!trailingSlash && rel !== '') {
      res.statusCode = 301;
      res.setHeader('location', `${rel.split('/').pop()}/`);
      return void res.end();
    }
    const entries = (await readdir(target, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const links = entries.map((e) => {
      const name = e.isDirectory() ? `${e.name}/` : e.name;
      return `<a href="${escapeHtml(encodeURIComponent(e.name).replace(/%2F/g, '/'))}${e.isDirectory() ? '/' : ''}">${escapeHtml(name)}</a>\n`;
    });
    res.statusCode = 200;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    return void res.end(`<pre>\n${links.join('')}</pre>\n`);
  }
  if (!st.isFile()) return notFound(res);
  res.statusCode = 200;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.setHeader('content-length', String(st.size));
  await new Promise<void>((resolve) => {
    const s = createReadStream(target);
    s.on('error', () => {
      res.destroy();
      resolve();
    });
    s.on('end', resolve);
    s.pipe(res);
  });
}
