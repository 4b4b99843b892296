// Self-signed serving certificates for npm start and the tests (webhook TLS, caBundle), made with the
// openssl CLI: a CA and a leaf for localhost/127.0.0.1, written as tls.crt/tls.key.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ServingCert {
  dir: string;
  certFile: string;
  keyFile: string;
  /** PEM of the CA that signed the leaf (what a caBundle carries). */
  caPem: string;
}

/** Writes a CA and a leaf for `hosts` (default localhost and 127.0.0.1) into `dir`; valid 2 days. */
export function createServingCert(
  dir: string,
  hosts: readonly string[] = ['localhost', '127.0.0.1'],
): ServingCert {
  mkdirSync(dir, { recursive: true });
  const p = (f: string) => join(dir, f);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=aiops-test-ca',
  );
  const san = hosts.map((h) => (/^[\d.]+$/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  writeFileSync(p('ext.cnf'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    p('tls.key'),
    '-out',
    p('tls.csr'),
    '-subj',
    `/CN=${hosts[0] ?? 'localhost'}`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    p('tls.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('tls.crt'),
    '-days',
    '2',
    '-extfile',
    p('ext.cnf'),
  );
  return { dir, certFile: p('tls.crt'), keyFile: p('tls.key'), caPem: readFileSync(p('ca.crt'), 'utf8') };
}
