/**
 * A throwaway PKI made with the openssl CLI: a CA, a server certificate for
 * 127.0.0.1/localhost, and a client certificate, all PEM files in `dir`.
 * For TLS tests of kubelet-ts-compare and for the Go kubelet's serving
 * certificate and client-CA authentication.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function makePki(dir: string, clientCn = 'kubelet-ts-compare'): Pki {
  const p = (f: string) => join(dir, f);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-subj',
    '/CN=kts-test-ca',
    '-days',
    '2',
  ]);
  const sign = (name: string, subj: string, ext: string) => {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', subj]);
    writeFileSync(p(`${name}.ext`), ext);
    openssl([
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p('ca.crt'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      p(`${name}.ext`),
    ]);
  };
  sign('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign('client', `/O=system:masters/CN=${clientCn}`, 'extendedKeyUsage=clientAuth\n');
  return {
    caCert: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
  };
}
