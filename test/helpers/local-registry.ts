/**
 * A minimal OCI distribution registry on 127.0.0.1 for e2e tests (no registry
 * is reachable from these machines): it serves one image, exported from
 * containerd as an OCI layout, under any repository name, and requires HTTP
 * Basic credentials. containerd pulls from a loopback host over plain HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LocalRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  /** Pull requests seen, with the user they authenticated as ('' when none or wrong). */
  pulls: { path: string; user: string }[];
  close(): Promise<void>;
}

export async function startLocalRegistry(o: {
  containerdAddress: string;
  image: string;
  username: string;
  password: string;
}): Promise<LocalRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'kts-registry-'));
  const tar = join(dir, 'image.tar');
  await run('ctr', ['--address', o.containerdAddress, '-n', 'k8s.io', 'images', 'export', tar, o.image]);
  await run('tar', ['-xf', tar, '-C', dir]);
  const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as { manifests: { mediaType: string; digest: string }[] };
  const manifest = index.manifests[0];
  const blob = (digest: string) => readFile(join(dir, 'blobs', ...digest.split(':')));
  const pulls: LocalRegistry['pulls'] = [];
  const expected = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;

  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const authed = req.headers.authorization === expected;
    pulls.push({ path, user: authed ? o.username : '' });
    if (!authed) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="kts-test"', 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
      return;
    }
    const send = async () => {
      if (path === '/v2/' || path === '/v2') return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      const m = /^\/v2\/.+\/(manifests|blobs)\/([^/]+)$/.exec(path);
      if (!m) return res.writeHead(404).end();
      const digest = m[1] === 'manifests' && !m[2].startsWith('sha256:') ? manifest.digest : m[2];
      let body: Buffer;
      try {
        body = await blob(digest);
      } catch {
        return res.writeHead(404).end();
      }
      res.writeHead(200, {
        'Content-Type': m[1] === 'manifests' ? manifest.mediaType : 'application/octet-stream',
        'Content-Length': body.length,
        'Docker-Content-Digest': digest,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    send().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    pulls,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
