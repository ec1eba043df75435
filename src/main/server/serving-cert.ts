/**
 * The server's TLS certificate and key (upstream InitializeTLS): the
 * configured tlsCertFile/tlsPrivateKeyFile, or else `kubelet.crt` /
 * `kubelet.key` in the cert directory, generated there when they cannot be
 * read (upstream GenerateSelfSignedCertKey: a CA "<host>-ca@<unix>" and a
 * serving certificate "<host>@<unix>" it signs, RSA 2048, valid from an hour
 * ago for a year, the hostname as DNS name or IP; the certificate file holds
 * the serving certificate then the CA). See self-signed-cert.ts.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../common/errors.js';

export interface ServingCert {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
  /** True when this start generated the pair. */
  generated: boolean;
}

/** Both files parse as a certificate and a key (upstream CanReadCertAndKey). */
function readPair(certFile: string, keyFile: string): { cert: string; key: string } | undefined {
  try {
    const cert = readFileSync(certFile, 'utf8');
    const key = readFileSync(keyFile, 'utf8');
    new X509Certificate(cert);
    createPrivateKey(key);
    return { cert, key };
  } catch {
    return undefined;
  }
}

export interface ServingCertOptions {
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  certDir: string;
  hostname: string;
  nowMs: number;
}

export async function loadServingCert(options: ServingCertOptions): Promise<ServingCert> {
  if (options.tlsCertFile && options.tlsPrivateKeyFile) {
    const pair = readPair(options.tlsCertFile, options.tlsPrivateKeyFile);
    if (!pair) {
      throw new ConfigError(
        `cannot load the serving certificate: tlsCertFile ${options.tlsCertFile} and tlsPrivateKeyFile ${options.tlsPrivateKeyFile} must be a readable PEM certificate and private key`,
      );
    }
    return { ...pair, certFile: options.tlsCertFile, keyFile: options.tlsPrivateKeyFile, generated: false };
  }
  const certFile = join(options.certDir, 'kubelet.crt');
  const keyFile = join(options.certDir, 'kubelet.key');
  const existing = readPair(certFile, keyFile);
  if (existing) return { ...existing, certFile, keyFile, generated: false };
  const { generateSelfSignedCertKey } = await import('./self-signed-cert.js');
  const pair = await generateSelfSignedCertKey(options.hostname, options.nowMs);
  mkdirSync(options.certDir, { recursive: true, mode: 0o755 });
  writeFileSync(certFile, pair.cert, { mode: 0o644 });
  writeFileSync(keyFile, pair.key, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  return { ...pair, certFile, keyFile, generated: true };
}
