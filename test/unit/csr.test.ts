import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { describe, expect, it } from 'vitest';
import { createCsr, csrName, generateClientKey, KUBELET_CLIENT_USAGES, nodeSubject } from '../../src/main/apiserver/csr.js';

function derOf(pemText: string, label: string): Buffer {
  const m = new RegExp(`-----BEGIN ${label}-----\\n([\\s\\S]+?)\\n-----END ${label}-----`).exec(pemText);
  expect(m).not.toBeNull();
  return Buffer.from(m![1].replace(/\s+/g, ''), 'base64');
}

const spkiOf = (keyPem: string) => createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });

describe('generateClientKey', () => {
  it('an EC P-256 private key in SEC1 PEM', () => {
    const key = generateClientKey();
    expect(key).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    const k = createPrivateKey(key);
    expect([k.asymmetricKeyType, k.asymmetricKeyDetails?.namedCurve]).toEqual(['ec', 'prime256v1']);
    expect(generateClientKey()).not.toBe(key);
  });
});

describe('createCsr', () => {
  const key = generateClientKey();
  const pemText = createCsr(key, nodeSubject('node1'));
  const csr = AsnConvert.parse(derOf(pemText, 'CERTIFICATE REQUEST'), CertificationRequest);
  const info = csr.certificationRequestInfo;

  it('is a PKCS#10 request, version 0, signed with ecdsa-with-SHA256', () => {
    expect(info.version).toBe(0);
    expect(csr.signatureAlgorithm.algorithm).toBe('1.2.840.10045.4.3.2');
  });

  it('has the subject O=system:nodes, CN=system:node:<name>, in that order', () => {
    const rdns = info.subject.map((rdn) => rdn.map((atv) => [atv.type, atv.value.toString()]));
    expect(rdns).toEqual([[['2.5.4.10', 'system:nodes']], [['2.5.4.3', 'system:node:node1']]]);
  });

  it('embeds the public key of the client key', () => {
    expect(Buffer.from(AsnConvert.serialize(info.subjectPKInfo))).toEqual(spkiOf(key));
  });

  it('the signature verifies against the embedded public key', () => {
    const pub = createPublicKey({ key: Buffer.from(AsnConvert.serialize(info.subjectPKInfo)), format: 'der', type: 'spki' });
    const signed = Buffer.from(AsnConvert.serialize(info));
    expect(verify('sha256', signed, pub, Buffer.from(csr.signature))).toBe(true);
    // …and not over other bytes.
    const tampered = new CertificationRequestInfo({ subject: info.subject, subjectPKInfo: info.subjectPKInfo, version: 1 });
    expect(verify('sha256', Buffer.from(AsnConvert.serialize(tampered)), pub, Buffer.from(csr.signature))).toBe(false);
  });

  it('round-trips through DER unchanged', () => {
    expect(Buffer.from(AsnConvert.serialize(csr))).toEqual(derOf(pemText, 'CERTIFICATE REQUEST'));
    expect(AsnConvert.parse(AsnConvert.serialize(info.subjectPKInfo), SubjectPublicKeyInfo).algorithm.algorithm).toBe('1.2.840.10045.2.1');
  });

  it('refuses a key that is not EC', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    expect(() => createCsr(rsa, nodeSubject('node1'))).toThrow(/expected an EC key/);
  });
});

describe('csrName', () => {
  const key = generateClientKey();
  const other = generateClientKey();

  it.each([
    { name: 'same key and node', a: [key, 'node1'], b: [key, 'node1'], same: true },
    { name: 'another key', a: [key, 'node1'], b: [other, 'node1'], same: false },
    { name: 'another node name', a: [key, 'node1'], b: [key, 'node2'], same: false },
  ])('$name → same name: $same', ({ a, b, same }) => {
    const na = csrName(a[0], nodeSubject(a[1]));
    const nb = csrName(b[0], nodeSubject(b[1]));
    expect(na).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);
    expect(na === nb).toBe(same);
  });

  // Upstream digestedName: SHA-512/256 over base64url(x) + "|" for the PKIX public
  // key, the CN, each O and each usage; "node-csr-" + base64url (no padding).
  it('is upstream digestedName for the key, subject and kubelet client usages', () => {
    const h = createHash('sha512-256');
    const write = (data: Buffer | string) => {
      h.update(Buffer.from(data).toString('base64url'));
      h.update('|');
    };
    write(spkiOf(key));
    write('system:node:node1');
    write('system:nodes');
    for (const u of ['digital signature', 'key encipherment', 'client auth']) write(u);
    expect(csrName(key, nodeSubject('node1'))).toBe(`node-csr-${h.digest('base64url')}`);
    expect([...KUBELET_CLIENT_USAGES]).toEqual(['digital signature', 'key encipherment', 'client auth']);
  });
});
