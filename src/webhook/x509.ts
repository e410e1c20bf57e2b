// A self-signed CA and a serving certificate for development and tests: ECDSA P-256 keys from node:crypto, X.509 encoded here.
//
// node:crypto makes keys and signs, but cannot write a certificate. The choices were the openssl binary
// (absent from distroless images, a child process at start), a library (node-forge: RSA only and slow;
// @peculiar/x509: a WebCrypto stack of six packages) or ~150 lines of DER for the one shape we need.
// We write the DER: a v3 certificate with basicConstraints, keyUsage, extKeyUsage, subjectAltName and
// key identifiers, which Go's strict x509 parser (kube-apiserver) and OpenSSL (Node) both accept.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** Options of {@link generateSelfSignedCertificates}. */
export interface SelfSignedOptions {
  /** DNS names and IP addresses the serving certificate is valid for. Default: `['localhost', '127.0.0.1', '::1']`. */
  hosts?: readonly string[];
  /** Days the CA and the serving certificate are valid. Default: 365. */
  validityDays?: number;
  /** The CA's common name. Default: `'kube-informer-webhook-ca'`. */
  caCommonName?: string;
  /** The wall-clock time the certificates start from (backdated by one hour for skew). Default: now. */
  now?: Date;
}

/** A CA and a serving certificate it signed, in PEM, with the CA as the `caBundle` webhook configurations want. */
export interface SelfSignedCertificates {
  /** The CA certificate (PEM). */
  caCert: string;
  /** The CA's private key (PKCS#8 PEM): sign more serving certificates with {@link issueServingCertificate}. */
  caKey: string;
  /** The serving certificate (PEM), signed by the CA. */
  cert: string;
  /** The serving certificate's private key (PKCS#8 PEM). */
  key: string;
  /** `caCert`, base64-encoded: the `caBundle` of a webhook's `clientConfig`. */
  caBundle: string;
}

/**
 * Generates a self-signed CA (ECDSA P-256) and a serving certificate it signed for `hosts`. For
 * development and tests; in production mount certificates (cert-manager) and give the server their files.
 */
export function generateSelfSignedCertificates(options: SelfSignedOptions = {}): SelfSignedCertificates {
  const now = options.now ?? new Date();
  const days = options.validityDays ?? 365;
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caName = options.caCommonName ?? 'kube-informer-webhook-ca';
  const caDer = certificate({ subject: caName, issuer: caName, publicKey: ca.publicKey, issuerPublicKey: ca.publicKey, signingKey: ca.privateKey, now, days, ca: true, hosts: [] });
  const caCert = pem('CERTIFICATE', caDer);
  const caKey = ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const serving = issueServingCertificate({ caCert, caKey, hosts: options.hosts, validityDays: days, now });
  return { caCert, caKey, ...serving, caBundle: Buffer.from(caCert).toString('base64') };
}

/** Options of {@link issueServingCertificate}. */
export interface IssueServingCertificateOptions {
  /** The CA certificate (PEM) from {@link generateSelfSignedCertificates}. */
  caCert: string;
  /** The CA's private key (PEM). */
  caKey: string;
  /** DNS names and IP addresses. Default: `['localhost', '127.0.0.1', '::1']`. */
  hosts?: readonly string[];
  /** Days valid. Default: 365. */
  validityDays?: number;
  /** The wall-clock start (backdated one hour). Default: now. */
  now?: Date;
}

/** A serving certificate and its key, PEM. */
export interface ServingCertificate {
  /** The certificate (PEM). */
  cert: string;
  /** Its private key (PKCS#8 PEM). */
  key: string;
}

/** Signs a new serving certificate (new key) with an existing CA: a rotation that keeps the `caBundle`. */
export function issueServingCertificate(options: IssueServingCertificateOptions): ServingCertificate {
  const caPrivate = createPrivateKey(options.caKey);
  const caX509 = new X509Certificate(options.caCert);
  const caName = /CN=([^\n]+)/.exec(caX509.subject)?.[1] ?? 'kube-informer-webhook-ca';
  const leaf = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  const der = certificate({
    subject: hosts[0] ?? 'webhook',
    issuer: caName,
    publicKey: leaf.publicKey,
    issuerPublicKey: createPublicKey(options.caCert),
    signingKey: caPrivate,
    now: options.now ?? new Date(),
    days: options.validityDays ?? 365,
    ca: false,
    hosts,
  });
  return { cert: pem('CERTIFICATE', der), key: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

interface CertificateSpec {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  issuerPublicKey: KeyObject;
  signingKey: KeyObject;
  now: Date;
  days: number;
  ca: boolean;
  hosts: readonly string[];
}

function certificate(spec: CertificateSpec): Buffer {
  const spki = spec.publicKey.export({ type: 'spki', format: 'der' });
  const issuerSpki = spec.issuerPublicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01; // positive and minimally encoded
  const algorithm = seq(oid('1.2.840.10045.4.3.2')); // ecdsa-with-SHA256, no parameters
  const notBefore = new Date(spec.now.getTime() - 3_600_000);
  const notAfter = new Date(spec.now.getTime() + spec.days * 86_400_000);
  const extensions = [
    extension('2.5.29.19', true, spec.ca ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
    // keyUsage: CA → digitalSignature, keyCertSign, cRLSign; leaf → digitalSignature.
    extension('2.5.29.15', true, spec.ca ? tlv(0x03, Buffer.from([0x01, 0x86])) : tlv(0x03, Buffer.from([0x07, 0x80]))),
    extension('2.5.29.14', false, tlv(0x04, keyId(spki))),
  ];
  if (!spec.ca) {
    extensions.push(extension('2.5.29.35', false, seq(tlv(0x80, keyId(issuerSpki)))));
    extensions.push(extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1')))); // serverAuth
    extensions.push(extension('2.5.29.17', false, seq(...spec.hosts.map(generalName))));
  }
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([0x02]))), // v3
    tlv(0x02, serial),
    algorithm,
    name(spec.issuer),
    seq(time(notBefore), time(notAfter)),
    name(spec.subject),
    spki,
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, spec.signingKey); // DER-encoded ECDSA signature
  return seq(tbs, algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
}

function keyId(spki: Buffer): Buffer {
  return createHash('sha1').update(spki).digest();
}

function generalName(host: string): Buffer {
  const family = isIP(host);
  if (family === 4) return tlv(0x87, Buffer.from(host.split('.').map(Number)));
  if (family === 6) return tlv(0x87, ipv6Bytes(host));
  return tlv(0x82, Buffer.from(host, 'ascii')); // dNSName
}

function ipv6Bytes(host: string): Buffer {
  const [head = '', tail] = host.split('::');
  const parts = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function name(commonName: string): Buffer {
  return seq(tlv(0x31, seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  // RFC 5280: UTCTime through 2049, GeneralizedTime from 2050.
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), tlv(0x01, Buffer.from([0xff])), tlv(0x04, value)) : seq(oid(id), tlv(0x04, value));
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function seq(...parts: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(parts));
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let header: number[];
  if (n < 0x80) header = [tag, n];
  else {
    const len: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) len.unshift(v & 0xff);
    header = [tag, 0x80 | len.length, ...len];
  }
  return Buffer.concat([Buffer.from(header), content]);
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64.endsWith('\n') ? b64 : `${b64}\n`}-----END ${label}-----\n`;
}
