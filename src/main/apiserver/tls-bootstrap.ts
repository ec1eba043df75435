/**
 * TLS bootstrapping (upstream pkg/kubelet/certificate/bootstrap LoadClientCert):
 * when --kubeconfig is missing or its client certificate has expired, the agent
 * uses --bootstrap-kubeconfig to ask the apiserver for a client certificate.
 *
 * 1. A valid --kubeconfig wins: nothing is requested.
 * 2. Else a valid `<certDir>/kubelet-client-current.pem` (from an earlier
 *    bootstrap) is reused: --kubeconfig is (re)written to point at it.
 * 3. Else a key is generated (or the pending `kubelet-client.key.tmp` reused), a
 *    CSR for system:node:<name> is created with signer
 *    kubernetes.io/kube-apiserver-client-kubelet, and the agent waits until the
 *    controller-manager approves and signs it. The certificate and key are stored
 *    as `kubelet-client-<timestamp>.pem` with the `kubelet-client-current.pem`
 *    symlink swapped atomically, and --kubeconfig is written to use them.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import type { Clock } from '../../common/clock.js';
import { ConfigError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { createCsr, csrName, generateClientKey, KUBELET_CLIENT_SIGNER, KUBELET_CLIENT_USAGES, nodeSubject } from './csr.js';
import { isAlreadyExists, type RestClient } from './rest-client.js';

export const CURRENT_CERT = 'kubelet-client-current.pem';
const PENDING_KEY = 'kubelet-client.key.tmp';
const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export interface BootstrapOptions {
  kubeconfigPath: string;
  bootstrapKubeconfigPath: string;
  certDir: string;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
  /** A client for the bootstrap credentials (its token may only create and read CSRs). */
  makeClient: (kc: KubeConfig) => RestClient;
}

/** Loads a kubeconfig file; throws ConfigError naming the file on any problem. */
export function loadKubeConfig(path: string, what: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    throw new ConfigError(`cannot load ${what} ${path}: ${errorMessage(err)}`, { cause: err });
  }
  if (!kc.getCurrentCluster()?.server) throw new ConfigError(`${what} ${path} has no current cluster with a server URL`);
  return kc;
}

/** PEM certificate text of a kubeconfig's current user, or undefined when it uses no client certificate. */
function clientCertPem(kc: KubeConfig): string | undefined {
  const user = kc.getCurrentUser();
  if (user?.certData) return Buffer.from(user.certData, 'base64').toString();
  if (user?.certFile) return readFileSync(user.certFile, 'utf8');
  return undefined;
}

/** Why a certificate PEM cannot be used at `now`, or undefined when it can. */
function certProblem(pemText: string, now: number): string | undefined {
  try {
    const cert = new X509Certificate(pemText);
    if (Date.parse(cert.validTo) <= now) return `expired at ${cert.validTo}`;
    if (Date.parse(cert.validFrom) > now) return `not valid before ${cert.validFrom}`;
    return undefined;
  } catch (err) {
    return `unreadable: ${errorMessage(err)}`;
  }
}

/** Upstream isClientConfigStillValid: loads, and its client certificate (if any) is within its validity. */
function usableKubeconfig(path: string, now: number): string | undefined {
  if (!existsSync(path)) return 'does not exist';
  try {
    const kc = loadKubeConfig(path, '--kubeconfig');
    const cert = clientCertPem(kc);
    return cert === undefined ? undefined : certProblem(cert, now);
  } catch (err) {
    return errorMessage(err);
  }
}

function writeKubeconfig(path: string, bootstrap: KubeConfig, certPath: string): void {
  const cluster = bootstrap.getCurrentCluster()!;
  const clusterEntry: Record<string, unknown> = { server: cluster.server };
  if (cluster.caData) clusterEntry['certificate-authority-data'] = cluster.caData;
  else if (cluster.caFile) clusterEntry['certificate-authority'] = cluster.caFile;
  if (cluster.skipTLSVerify) clusterEntry['insecure-skip-tls-verify'] = true;
  if (cluster.tlsServerName) clusterEntry['tls-server-name'] = cluster.tlsServerName;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster: clusterEntry }],
    users: [{ name: 'default-auth', user: { 'client-certificate': certPath, 'client-key': certPath } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } }],
    'current-context': 'default-context',
  };
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, stringify(doc), { mode: 0o600 });
  renameSync(tmp, path);
}

/** Ensures --kubeconfig holds usable credentials, bootstrapping a client certificate if needed. */
export async function loadClientCertificate(options: BootstrapOptions): Promise<void> {
  const now = options.clock.now();
  const problem = usableKubeconfig(options.kubeconfigPath, now);
  if (problem === undefined) return;
  options.logger.info(
    { kubeconfig: options.kubeconfigPath, reason: problem },
    'Using the bootstrap kubeconfig to get a client certificate',
  );
  const bootstrap = loadKubeConfig(options.bootstrapKubeconfigPath, '--bootstrap-kubeconfig');
  mkdirSync(options.certDir, { recursive: true, mode: 0o700 });
  const current = join(options.certDir, CURRENT_CERT);
  if (existsSync(current) && certProblem(readFileSync(current, 'utf8'), now) === undefined) {
    options.logger.info({ cert: current }, 'Reusing the client certificate from an earlier bootstrap');
    writeKubeconfig(options.kubeconfigPath, bootstrap, current);
    return;
  }

  const keyPath = join(options.certDir, PENDING_KEY);
  let keyPem: string;
  if (existsSync(keyPath)) {
    keyPem = readFileSync(keyPath, 'utf8');
  } else {
    keyPem = generateClientKey();
    writeFileSync(keyPath, keyPem, { mode: 0o600 });
  }
  const subject = nodeSubject(options.nodeName);
  const name = csrName(keyPem, subject);
  const client = options.makeClient(bootstrap);
  const body = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: Buffer.from(createCsr(keyPem, subject)).toString('base64'),
      signerName: KUBELET_CLIENT_SIGNER,
      usages: [...KUBELET_CLIENT_USAGES],
    },
  };
  try {
    await client.create(CSR_PATH, body, { signal: options.signal });
    options.logger.info({ csr: name, signer: KUBELET_CLIENT_SIGNER }, 'Created a certificate signing request; waiting for approval');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    options.logger.info({ csr: name }, 'Waiting for the certificate signing request created earlier');
  }
  const certPem = await waitForCertificate(client, name, options);
  const stamp = new Date(options.clock.now()).toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const file = join(options.certDir, `kubelet-client-${stamp}.pem`);
  writeFileSync(file, `${certPem.trimEnd()}\n${keyPem}`, { mode: 0o600 });
  const link = `${current}.updating`;
  rmSync(link, { force: true });
  symlinkSync(file, link);
  renameSync(link, current);
  rmSync(keyPath, { force: true });
  writeKubeconfig(options.kubeconfigPath, bootstrap, current);
  options.logger.info({ cert: file, kubeconfig: options.kubeconfigPath }, 'Client certificate issued and stored');
}

interface CsrObject {
  status?: { certificate?: string; conditions?: { type: string; reason?: string; message?: string }[] };
}

async function waitForCertificate(client: RestClient, name: string, options: BootstrapOptions): Promise<string> {
  let delay = 500;
  for (;;) {
    const csr = await client.get<CsrObject>(`${CSR_PATH}/${name}`, { signal: options.signal });
    const bad = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (bad) {
      throw new ConfigError(
        `certificate signing request ${name} was ${bad.type.toLowerCase()}: ${bad.reason ?? ''} ${bad.message ?? ''}`.trim(),
      );
    }
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString();
    await options.clock.sleep(delay, options.signal);
    delay = Math.min(delay * 2, 5000);
  }
}
