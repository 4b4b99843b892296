// OLM's bundle validator on the generated bundle: `operator-sdk bundle validate
// --select-optional suite=operatorframework` must pass with no warning outside the
// justified allow-list, and must fail when a required part of the CSV is broken, which
// proves the check can fail.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { ALLOWED_WARNINGS } from '../../scripts/olm/warnings.ts';
import { ROOT, run, scratchCopy, skipUnless } from './validators.ts';

const skip = skipUnless('operator-sdk');

interface Output {
  readonly passed: boolean;
  readonly outputs: readonly { readonly type: string; readonly message: string }[] | null;
}

async function validate(bundleDir: string): Promise<{ code: number; result: Output }> {
  const r = await run('operator-sdk', [
    'bundle',
    'validate',
    bundleDir,
    '--select-optional',
    'suite=operatorframework',
    '--image-builder',
    'none',
    '--output',
    'json-alpha1',
  ]);
  return { code: r.code, result: JSON.parse(r.stdout) as Output };
}

type CSV = { metadata: Record<string, unknown> & { annotations: Record<string, string> } } & {
  spec: Record<string, unknown>;
};

/** A scratch copy of bundle/ whose CSV was changed by `mutate`. */
function seeded(mutate: (csv: CSV) => void): { dir: string; cleanup: () => void } {
  const copy = scratchCopy('bundle');
  const manifests = join(copy.dir, 'manifests');
  const file = readdirSync(manifests).find((f) => f.endsWith('.clusterserviceversion.yaml'));
  assert.ok(file, 'the bundle has a CSV');
  const csv = load(readFileSync(join(manifests, file), 'utf8')) as CSV;
  mutate(csv);
  writeFileSync(join(manifests, file), dump(csv, { lineWidth: -1 }));
  return copy;
}

test('the generated bundle passes the operatorframework suite', { skip }, async () => {
  const { code, result } = await validate(join(ROOT, 'bundle'));
  const outputs = result.outputs ?? [];
  assert.deepEqual(
    outputs.filter((o) => o.type === 'error'),
    [],
  );
  assert.equal(code, 0);
  assert.equal(result.passed, true);
  const unjustified = outputs.filter(
    (o) => o.type === 'warning' && !ALLOWED_WARNINGS.some((w) => o.message.includes(w.match)),
  );
  assert.deepEqual(unjustified, [], 'every warning is justified in scripts/olm/warnings.ts');
});

const spec = (csv: CSV): Record<string, unknown> => csv.spec;
const defects: readonly [string, (csv: CSV) => void, RegExp][] = [
  ['no install strategy', (c) => delete spec(c)['install'], /install|deployment/i],
  ['no install modes', (c) => delete spec(c)['installModes'], /install modes not found/],
  [
    'a namespaced install mode with a conversion webhook',
    (c) => {
      spec(c)['installModes'] = [
        { type: 'OwnNamespace', supported: true },
        { type: 'AllNamespaces', supported: true },
      ];
    },
    /only AllNamespaces InstallModeType is supported when conversionCRDs is present/,
  ],
  [
    'an owned version dropped',
    (c) => {
      const crds = spec(c)['customresourcedefinitions'] as { owned: { version: string }[] };
      crds.owned = crds.owned.filter((o) => o.version !== 'v1');
    },
    /aiops\.example\.com\/v1, Kind=AITask: example must have a provided API/,
  ],
  [
    'an example of an API the CSV does not provide',
    (c) => {
      c.metadata.annotations['alm-examples'] = JSON.stringify([
        { apiVersion: 'aiops.example.com/v9', kind: 'AITask', metadata: { name: 'x' }, spec: {} },
      ]);
    },
    /provided API/i,
  ],
  ['a minKubeVersion that is not semver', (c) => (spec(c)['minKubeVersion'] = '1.29'), /minKubeVersion/i],
  ['no provider', (c) => delete spec(c)['provider'], /provider/i],
  ['no display name', (c) => delete spec(c)['displayName'], /displayName/i],
  ['no version', (c) => delete spec(c)['version'], /csv\.Spec\.Version must be set/],
  [
    'a maintainer without a valid email',
    (c) => (spec(c)['maintainers'] = [{ name: 'x', email: 'not-an-email' }]),
    /email/i,
  ],
  [
    'an icon of an unsupported media type',
    (c) => (spec(c)['icon'] = [{ base64data: 'AA==', mediatype: 'image/bmp' }]),
    /icon|mediatype/i,
  ],
  ['a link that is not a URL', (c) => (spec(c)['links'] = [{ name: 'Docs', url: 'not a url' }]), /url|link/i],
  ['an unknown category', (c) => (c.metadata.annotations['categories'] = 'Gardening'), /categor/i],
  ['an unknown capability level', (c) => (c.metadata.annotations['capabilities'] = 'Magic'), /capabilit/i],
];

for (const [what, mutate, expected] of defects) {
  test(`validation fails on a seeded defect: ${what}`, { skip }, async () => {
    const copy = seeded(mutate);
    try {
      const { code, result } = await validate(copy.dir);
      const errors = (result.outputs ?? []).filter((o) => o.type === 'error').map((o) => o.message);
      assert.notEqual(code, 0, `operator-sdk accepted the bundle with ${what}`);
      assert.equal(result.passed, false);
      assert.match(errors.join('\n'), expected);
    } finally {
      copy.cleanup();
    }
  });
}
