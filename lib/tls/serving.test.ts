// Which failed TLS handshakes mean "the client does not trust the served certificate": the
// codes Node gives for the alerts Go's crypto/tls (the kube-apiserver, kubectl) and OpenSSL
// clients send, against handshakes that fail for other reasons.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCertificateRejection } from './serving.ts';

test('isCertificateRejection: table of tlsClientError codes', () => {
  const cases: [string | undefined, boolean, string][] = [
    [
      'ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE',
      true,
      'Go client (kube-apiserver, kubectl): verification failed',
    ],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', true, 'the same alert as older OpenSSL names it'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', true, 'OpenSSL client (curl): unknown CA'],
    ['ERR_SSL_SSL/TLS_ALERT_CERTIFICATE_UNKNOWN', true, 'certificate_unknown'],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED', true, 'certificate_expired'],
    ['ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', false, 'a protocol mismatch'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', false, 'plain HTTP to the TLS port'],
    ['ERR_SSL_HTTP_REQUEST', false, 'an HTTP request on the TLS port'],
    ['ECONNRESET', false, 'the client went away'],
    [undefined, false, 'no code'],
  ];
  for (const [code, want, why] of cases) assert.equal(isCertificateRejection(code), want, `${code}: ${why}`);
});
