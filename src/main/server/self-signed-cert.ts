/**
 * Upstream GenerateSelfSignedCertKey: a CA "<host>-ca@<unix>" and a serving
 * certificate "<host>@<unix>" it signs, RSA 2048, valid from an hour ago for
 * a year, the hostname as DNS name or IP. serving-cert.ts imports this module
 * only when it has to generate the pair, so the ASN.1 libraries are not
 * loaded when the pair is configured or already on disk. The two keys are
 * generated on the thread pool, so the main thread goes on with start-up
 * meanwhile (two RSA keys take ~0.3-0.7 s of CPU).
 */
import { generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  id_kp_serverAuth,
  KeyUsage,
  KeyUsageFlags,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';

const OID_SHA256_WITH_RSA = '1.2.840.113549.1.1.11';
const OID_COMMON_NAME = '2.5.4.3';
const HOUR_MS = 3_600_000;
const YEAR_MS = 365 * 24 * HOUR_MS;
const rsa2048 = () => promisify(generateKeyPair)('rsa', { modulusLength: 2048 });

function pem(label: string, der: ArrayBuffer | Buffer): string {
  const body = Buffer.from(der as ArrayBuffer)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function name(cn: string): Name {
  return new Name([
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type: OID_COMMON_NAME, value: new AttributeValue({ utf8String: cn }) })]),
  ]);
}

function ext(id: string, value: unknown, critical = false): Extension {
  return new Extension({ extnID: id, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

function certificate(o: {
  serial: number;
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  signer: KeyObject;
  notBefore: Date;
  ca: boolean;
  sans: GeneralName[];
}): ArrayBuffer {
  const usage = o.ca
    ? KeyUsageFlags.keyEncipherment | KeyUsageFlags.digitalSignature | KeyUsageFlags.keyCertSign
    : KeyUsageFlags.keyEncipherment | KeyUsageFlags.digitalSignature;
  const extensions = [
    ext(id_ce_keyUsage, new KeyUsage(usage), true),
    ext(id_ce_basicConstraints, new BasicConstraints({ cA: o.ca }), true),
  ];
  if (!o.ca) extensions.push(ext(id_ce_extKeyUsage, new ExtendedKeyUsage([id_kp_serverAuth])));
  if (o.sans.length) extensions.push(ext(id_ce_subjectAltName, new SubjectAlternativeName(o.sans)));
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: new Uint8Array([o.serial]).buffer,
    signature: new AlgorithmIdentifier({ algorithm: OID_SHA256_WITH_RSA, parameters: null }),
    issuer: name(o.issuer),
    validity: new Validity({ notBefore: o.notBefore, notAfter: new Date(o.notBefore.getTime() + YEAR_MS) }),
    subject: name(o.subject),
    subjectPublicKeyInfo: AsnConvert.parse(o.publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo),
    extensions: new Extensions(extensions),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signature = sign('sha256', tbsDer, o.signer);
  return AsnConvert.serialize(
    new Certificate({
      tbsCertificate: tbs,
      signatureAlgorithm: new AlgorithmIdentifier({ algorithm: OID_SHA256_WITH_RSA, parameters: null }),
      signatureValue: new Uint8Array(signature).buffer,
    }),
  );
}

/** Upstream GenerateSelfSignedCertKey(host, nil, nil): PEM certificate chain (serving, CA) and PKCS#1 key. */
export async function generateSelfSignedCertKey(host: string, nowMs: number): Promise<{ cert: string; key: string }> {
  const notBefore = new Date(nowMs - HOUR_MS);
  const unix = Math.floor(nowMs / 1000);
  const [ca, leaf] = await Promise.all([rsa2048(), rsa2048()]);
  const caCN = `${host}-ca@${unix}`;
  const caDer = certificate({
    serial: 1,
    subject: caCN,
    issuer: caCN,
    publicKey: ca.publicKey,
    signer: ca.privateKey,
    notBefore,
    ca: true,
    sans: [],
  });
  const san = isIP(host) ? new GeneralName({ iPAddress: host }) : new GeneralName({ dNSName: host });
  const leafDer = certificate({
    serial: 2,
    subject: `${host}@${unix}`,
    issuer: caCN,
    publicKey: leaf.publicKey,
    signer: ca.privateKey,
    notBefore,
    ca: false,
    sans: [san],
  });
  return {
    cert: pem('CERTIFICATE', leafDer) + pem('CERTIFICATE', caDer),
    key: leaf.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}
