// caBundleTrusts against certificates made as the shipped install makes them: the CA that
// signed the served certificate trusts it (alone or among others), any other CA, an empty or
// garbled bundle does not.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { caBundleTrusts } from './ca-trust.ts';

const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

test('the signing CA trusts the served certificate; another CA, an empty or garbled bundle does not', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-ca-trust-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const a = createServingCert(join(dir, 'a'));
  const b = createServingCert(join(dir, 'b'));
  const served = readFileSync(a.certFile);
  assert.equal(caBundleTrusts(b64(a.caPem), served), true);
  assert.equal(caBundleTrusts(b64(b.caPem + a.caPem), served), true, 'among others');
  assert.equal(caBundleTrusts(b64(b.caPem), served), false);
  assert.equal(caBundleTrusts(undefined, served), false);
  assert.equal(caBundleTrusts('', served), false);
  assert.equal(caBundleTrusts('not base64 of a PEM', served), false);
  assert.equal(caBundleTrusts(b64(a.caPem), 'no certificate'), false);
});
