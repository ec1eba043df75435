/**
 * kubelet-ts-compare's scraper against local https servers made like a real
 * kubelet's port 10250: a certificate from a test CA, client-certificate or
 * bearer-token authentication, 401 without credentials.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/compare/cli.js';
import { makeScraper } from '../../src/compare/scrape.js';
import { makePki, type Pki } from '../helpers/pki.js';

const body = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'metrics', 'go-kubelet-1.20.2-b.txt'), 'utf8');
const TOKEN = 'sekret-token';

describe('scraping https /metrics with credentials', () => {
  let dir: string;
  let pki: Pki;
  let servers: (http.Server | https.Server)[] = [];
  let certUrl: string;
  let tokenUrl: string;
  let plainUrl: string;

  const listen = async (s: http.Server | https.Server) => {
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-compare-tls-'));
    pki = makePki(dir);
    const tls = { cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) };
    const certServer = https.createServer(
      { ...tls, ca: readFileSync(pki.caCert), requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        if (!(req.socket as TLSSocket).authorized) return res.writeHead(401).end('Unauthorized');
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
      },
    );
    const tokenServer = https.createServer(tls, (req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`)
        return res.writeHead(req.headers.authorization ? 403 : 401).end('Forbidden: user "x" cannot get nodes/metrics');
      res.writeHead(200).end(body);
    });
    const plain = http.createServer((_req, res) => res.end(body));
    certUrl = `https://127.0.0.1:${await listen(certServer)}/metrics`;
    tokenUrl = `https://127.0.0.1:${await listen(tokenServer)}/metrics`;
    plainUrl = `http://127.0.0.1:${await listen(plain)}/metrics`;
  });

  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
    servers = [];
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = (url: string, opts: Partial<Parameters<typeof makeScraper>[0]>) => makeScraper({ timeoutMs: 5000, ...opts })(url);

  it('a client certificate signed by the CA the server trusts', async () => {
    const text = await scrape(certUrl, {
      ca: readFileSync(pki.caCert),
      cert: readFileSync(pki.clientCert),
      key: readFileSync(pki.clientKey),
    });
    expect(text).toBe(body);
  });

  it.each([
    [
      'no client certificate',
      () => ({ ca: readFileSync(pki.caCert) }),
      /401 Unauthorized: the kubelet wants credentials: pass --token, or --cert and --key/,
    ],
    [
      'an unknown server CA',
      () => ({}),
      /(self-signed certificate in certificate chain|unable to verify the first certificate); the server certificate (chain ends in|is signed by) an unknown CA: pass --cacert FILE or --insecure/,
    ],
  ])('%s is a clear error', async (_n, opts, message) => {
    await expect(scrape(certUrl, opts())).rejects.toThrow(message);
  });

  it('a bearer token, and --insecure', async () => {
    expect(await scrape(tokenUrl, { token: TOKEN, insecure: true })).toBe(body);
    await expect(scrape(tokenUrl, { token: 'wrong', insecure: true })).rejects.toThrow(
      /403 Forbidden: the credentials are not allowed to get \/metrics \(Forbidden: user "x"/,
    );
  });

  it('https to a plain http port says so', async () => {
    await expect(scrape(plainUrl.replace('http:', 'https:'), {})).rejects.toThrow(/TLS handshake failed: is it https\?/);
  });

  it('the CLI passes --cacert, --cert, --key and --token-file through', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    let out = '';
    let err = '';
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } };
    const code = await main(
      ['--window', '0', '--cacert', pki.caCert, '--cert', pki.clientCert, '--key', pki.clientKey, `a=${certUrl}`, `p=${plainUrl}`],
      io,
    );
    expect(code, err).toBe(0);
    expect(out).toMatch(/^ {2}count\s+18\s+18\s+1.00×$/m);
    const code2 = await main(['--window', '0', '--insecure', '--token-file', tokenFile, `t=${tokenUrl}`], io);
    expect(code2, err).toBe(0);
  });
});
