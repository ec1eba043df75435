/**
 * Fetches a /metrics URL over http or https, the way a user reaches a real
 * kubelet's port 10250: a client certificate and key, a bearer token, a CA
 * bundle, or --insecure (no server certificate check). node:https is used
 * because fetch() in Node 20 cannot present a client certificate.
 */
import http from 'node:http';
import https from 'node:https';
import { ScrapeError } from './errors.js';

export interface ScrapeOptions {
  /** PEM client certificate and key (mutual TLS). */
  cert?: Buffer;
  key?: Buffer;
  /** PEM CA bundle for the server certificate. */
  ca?: Buffer;
  /** Sent as `Authorization: Bearer …`. */
  token?: string;
  /** Skip the server certificate check. */
  insecure?: boolean;
  timeoutMs: number;
}

/** Fetches one URL and returns the body; `Scraper` is the seam tests replace. */
export type Scraper = (url: string) => Promise<string>;

const MAX_BYTES = 64 * 1024 * 1024;

const TLS_HINTS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server certificate is self-signed: pass --cacert FILE (its CA) or --insecure',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server certificate chain ends in an unknown CA: pass --cacert FILE or --insecure',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server certificate is signed by an unknown CA: pass --cacert FILE or --insecure',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server certificate is not valid for this host name: use the name it was issued for, or --insecure',
  ECONNREFUSED: 'nothing listens there: check the host and port (a kubelet serves /metrics on --port, 10250 by default)',
  EPROTO: 'TLS handshake failed: is it https? (a kubelet serves https on its port, 10250, and plain http on its read-only port, 10255)',
};

function hintFor(err: NodeJS.ErrnoException): string {
  return TLS_HINTS[err.code ?? ''] ?? (/wrong version number|packet length too long/.test(err.message) ? TLS_HINTS.EPROTO : '');
}

export function makeScraper(opts: ScrapeOptions): Scraper {
  return (url) =>
    new Promise<string>((resolve, reject) => {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return reject(new ScrapeError(`${url}: not a URL`));
      }
      const headers: Record<string, string> = { accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1' };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      const tls = u.protocol === 'https:';
      const request = tls
        ? https.request(u, { headers, cert: opts.cert, key: opts.key, ca: opts.ca, rejectUnauthorized: !opts.insecure })
        : http.request(u, { headers });
      const fail = (why: string) => reject(new ScrapeError(`scrape of ${url} failed: ${why}`));
      request.setTimeout(opts.timeoutMs, () => request.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
      request.on('error', (err: NodeJS.ErrnoException) => {
        const hint = hintFor(err);
        fail(`${err.message}${hint ? `; ${hint}` : ''}`);
      });
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) request.destroy(new Error(`the answer is larger than ${MAX_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('error', (err) => fail(err.message));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status === 401) return fail('401 Unauthorized: the kubelet wants credentials: pass --token, or --cert and --key');
          if (status === 403) return fail(`403 Forbidden: the credentials are not allowed to get /metrics (${body.trim().slice(0, 200)})`);
          if (status < 200 || status > 299) return fail(`HTTP ${status} ${res.statusMessage ?? ''}: ${body.trim().slice(0, 200)}`);
          resolve(body);
        });
      });
      request.end();
    });
}
