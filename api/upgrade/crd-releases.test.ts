// The release table and the default CRD builder must agree: the newest declared release
// is the package's version and its CRD is exactly what the bundle and manifests ship.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildCRD } from '../crd.ts';
import { acceptanceOf, CRD_RELEASES, crdOfRelease, maybeStoredAt } from './crd-releases.ts';

const conversion = { url: 'https://127.0.0.1:9443/convert' };

test('the newest release is the package version and builds the current CRD', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const last = CRD_RELEASES.at(-1);
  assert.ok(last);
  assert.equal(last.version, pkg.version);
  assert.deepEqual(crdOfRelease(last, conversion), buildCRD({ conversion }));
});

test('the first release is the seed\'s: v1 only, no webhook, an omitted namespace defaults to "default"', () => {
  const first = CRD_RELEASES[0];
  assert.ok(first);
  const crd = crdOfRelease(first);
  assert.deepEqual(crd.spec.conversion, { strategy: 'None' });
  assert.deepEqual(
    crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
    [['v1', true, true]],
  );
  const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.['spec'];
  assert.equal(spec?.properties?.['namespace']?.default, 'default');
  const later = CRD_RELEASES.slice(1).map((r) => crdOfRelease(r, conversion));
  for (const c of later) {
    const v1 = c.spec.versions.find((v) => v.name === 'v1');
    assert.equal(
      v1?.schema.openAPIV3Schema.properties?.['spec']?.properties?.['namespace']?.default,
      undefined,
    );
  }
});

test('maybeStoredAt accumulates storage versions until a release that required migration', () => {
  const releases = [
    { version: '0.1.0', versions: ['v1alpha1'], storage: 'v1alpha1', deprecated: [] },
    { version: '0.2.0', versions: ['v1alpha1', 'v1'], storage: 'v1', deprecated: [] },
    { version: '1.0.0', versions: ['v1alpha1', 'v1', 'v2'], storage: 'v2', deprecated: ['v1alpha1'] },
    { version: '2.0.0', versions: ['v1', 'v2'], storage: 'v2', deprecated: [], requiresMigration: true },
  ] as const;
  assert.deepEqual(maybeStoredAt(releases, 2), ['v1alpha1', 'v1', 'v2']);
  assert.deepEqual(maybeStoredAt(releases, 3), ['v2']);
});

test('the declared release sequence passes the upgrade-safety check but for what each release declares intended', async () => {
  const { checkUpgrade } = await import('./safety.ts');
  for (let i = 1; i < CRD_RELEASES.length; i++) {
    const [from, to] = [CRD_RELEASES[i - 1], CRD_RELEASES[i]];
    assert.ok(from && to);
    const findings = checkUpgrade(
      crdOfRelease(from, conversion),
      crdOfRelease(to, conversion),
      maybeStoredAt(CRD_RELEASES, i - 1),
    );
    assert.deepEqual(
      findings.filter((f) => acceptanceOf(to, f) === undefined),
      [],
      `${from.version} → ${to.version}`,
    );
    assert.equal(findings.length, (to.accepted ?? []).length, 'every declared exception still occurs');
  }
});
