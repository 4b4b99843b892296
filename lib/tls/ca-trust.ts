// Whether a CA bundle verifies a served certificate: what the apiserver decides when it
// calls the webhook, decided here from the CRD's caBundle so the operator can tell a real
// mismatch (every conversion fails) from a stranger whose client lacks the CA (a rejected
// handshake that means nothing). Pure: PEM in, boolean out.

import { X509Certificate } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text, skipping any block that does not parse. */
function certificates(pem: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      // Not a certificate: it verifies nothing.
    }
  }
  return out;
}

/**
 * True when a certificate of `caBundle` (base64 of PEM, as in a CRD's
 * `spec.conversion.webhook.clientConfig.caBundle`) issued and signed the first certificate of
 * `servedPem` (the leaf), or of a chain certificate served after it that such a CA signed; also
 * true when the bundle holds the leaf itself. False for an empty, undecodable or unrelated
 * bundle. Expiry is not judged here (the certificate expiry alerts do).
 */
export function caBundleTrusts(caBundle: string | undefined, servedPem: string | Buffer): boolean {
  if (caBundle === undefined || caBundle === '') return false;
  const cas = certificates(Buffer.from(caBundle, 'base64').toString('utf8'));
  const chain = certificates(servedPem.toString());
  const leaf = chain[0];
  if (leaf === undefined || cas.length === 0) return false;
  const signedBy = (cert: X509Certificate, ca: X509Certificate): boolean =>
    cert.checkIssued(ca) && cert.verify(ca.publicKey);
  for (const ca of cas) {
    if (ca.fingerprint256 === leaf.fingerprint256) return true;
    if (signedBy(leaf, ca)) return true;
    for (const link of chain.slice(1)) if (signedBy(leaf, link) && signedBy(link, ca)) return true;
  }
  return false;
}
