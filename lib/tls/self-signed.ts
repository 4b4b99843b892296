// Self-signed serving certificates for the webhook when no cert-manager or OLM provides
// one: a long-lived CA (10 years, so the CRD's caBundle stays stable) and a short-lived
// leaf signed by it. ECDSA P-256 through WebCrypto; @peculiar/x509 writes the X.509.

import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

// Node's WebCrypto through its global, which loads it on first use (as `webcrypto` of
// node:crypto does; the operator's bundle reads every named import of a built-in at start).
const webcrypto = globalThis.crypto;
x509.cryptoProvider.set(webcrypto);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface CertAuthority {
  certPem: string;
  keyPem: string;
}

export interface ServingCert {
  certPem: string;
  keyPem: string;
  notAfter: Date;
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

async function exportKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** A new CA valid from `now` for `days` (default 3650). */
export async function generateCA(now = new Date(), days = 3650): Promise<CertAuthority> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=aiops-webhook-ca,O=aiops',
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + days * DAY_MS),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
}

/** A serving certificate for `dnsNames` signed by `ca`, valid for `days` (default 365). */
export async function issueServingCert(
  ca: CertAuthority,
  dnsNames: readonly string[],
  now = new Date(),
  days = 365,
): Promise<ServingCert> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(ca.keyPem),
    ALG,
    false,
    ['sign'],
  );
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const notAfter = new Date(now.getTime() + days * DAY_MS);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${dnsNames[0] ?? 'localhost'}`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        dnsNames.map((value) =>
          /^[\d.]+$/.test(value) ? { type: 'ip' as const, value } : { type: 'dns' as const, value },
        ),
      ),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey), notAfter };
}

/** Expiry and DNS/IP names of a PEM certificate. */
export function inspectCert(pem: string): { notAfter: Date; names: string[] } {
  const cert = new x509.X509Certificate(pem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  return { notAfter: cert.notAfter, names: san ? san.names.items.map((n) => n.value) : [] };
}
