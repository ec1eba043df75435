/**
 * The node's client key and its PKCS#10 certificate signing request, for TLS
 * bootstrapping: an ECDSA P-256 key (as upstream's kubelet) and a CSR for
 * `O=system:nodes, CN=system:node:<name>`, encoded with the @peculiar ASN.1
 * schemas and signed with node:crypto.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
} from '@peculiar/asn1-x509';

const OID_ORGANIZATION = '2.5.4.10';
const OID_COMMON_NAME = '2.5.4.3';
const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/** The usages upstream's kubelet asks for on its client certificate. */
export const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'] as const;
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

export interface NodeSubject {
  organization: string;
  commonName: string;
}

export function nodeSubject(nodeName: string): NodeSubject {
  return { organization: 'system:nodes', commonName: `system:node:${nodeName}` };
}

/** A new EC P-256 private key, PEM (SEC1, "EC PRIVATE KEY"), as upstream writes kubelet-client keys. */
export function generateClientKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'sec1', format: 'pem' }).toString();
}

function pem(label: string, der: Buffer): string {
  const body = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function rdn(oid: string, value: string): RelativeDistinguishedName {
  return new RelativeDistinguishedName([new AttributeTypeAndValue({ type: oid, value: new AttributeValue({ utf8String: value }) })]);
}

/** A PEM CSR for `subject`, signed by `keyPem` (an EC private key). */
export function createCsr(keyPem: string, subject: NodeSubject): string {
  const key: KeyObject = createPrivateKey(keyPem);
  if (key.asymmetricKeyType !== 'ec') throw new Error(`the client key is ${key.asymmetricKeyType ?? 'unknown'}, expected an EC key`);
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const info = new CertificationRequestInfo({
    subject: new Name([rdn(OID_ORGANIZATION, subject.organization), rdn(OID_COMMON_NAME, subject.commonName)]),
    subjectPKInfo: AsnConvert.parse(spki, SubjectPublicKeyInfo),
  });
  const signature = sign('sha256', Buffer.from(AsnConvert.serialize(info)), key);
  const csr = new CertificationRequest({
    certificationRequestInfo: info,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: OID_ECDSA_WITH_SHA256 }),
    signature: new Uint8Array(signature).buffer,
  });
  return pem('CERTIFICATE REQUEST', Buffer.from(AsnConvert.serialize(csr)));
}

/**
 * The CSR object's name: `node-csr-` plus a digest of the public key, subject and
 * usages, computed as upstream's digestedName (so the Go kubelet would pick the same
 * name), and a restarted bootstrap with the same key finds the CSR it created.
 */
export function csrName(keyPem: string, subject: NodeSubject): string {
  const spki = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  // Upstream digestedName: SHA-512/256 over base64url(field) + '|' for the key, CN, each O and each usage.
  const h = createHash('sha512-256');
  const write = (data: Buffer) => h.update(`${data.toString('base64url')}|`);
  write(spki);
  write(Buffer.from(subject.commonName));
  write(Buffer.from(subject.organization));
  for (const u of KUBELET_CLIENT_USAGES) write(Buffer.from(u));
  return `node-csr-${h.digest('base64url')}`;
}
