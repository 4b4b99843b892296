// `npm run check-upgrade` as users type it: the declared releases pass (the seed's namespace
// default shown as intended, with its reason), a candidate CRD that drops stored v1 fails
// naming the rule, and a bad flag gets the usage line and exit 2.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { crdOfRelease } from '../api/upgrade/crd-releases.ts';
import { toYaml } from '../lib/yaml.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const checkUpgrade = (...args: string[]) =>
  spawnSync('npm', ['run', '-s', 'check-upgrade', '--', ...args], { cwd: root, encoding: 'utf8' });

test('the declared releases pass; the intended finding is printed with its reason', () => {
  const r = checkUpgrade();
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /^0\.1\.0 → 0\.2\.0 \(may be stored: v1\): safe\n {2}intended: v1\.spec\.namespace: .*\(defaultChanged\)/m,
  );
  assert.match(r.stdout, /^ {4}why: the seed defaulted an omitted namespace/m);
  assert.match(r.stdout, /^0\.2\.0 → 1\.0\.0 \(may be stored: v1\): safe$/m);
});

test('a candidate that stops serving stored v1 is unsafe; a bad flag is a usage error', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-check-upgrade-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'next.yaml');
  const next = {
    version: '1.1.0',
    versions: ['v1alpha1', 'v2'],
    storage: 'v2',
    deprecated: ['v1alpha1'],
  } as const;
  writeFileSync(file, toYaml(crdOfRelease(next, { url: 'https://127.0.0.1:9443/convert' })));
  const r = checkUpgrade('--candidate', file);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /→ candidate .*: UNSAFE\n {2}v1: .*\(storedVersionRemoved\)/);

  const bad = checkUpgrade('--candiate', file);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /Unknown option '--candiate'\nusage: npm run check-upgrade/);
  const missing = checkUpgrade('--candidate', join(dir, 'nope.yaml'));
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /cannot read .*nope\.yaml/);
});
