// The operator image is what it says: built from the Dockerfile on a base under a name of its
// own (localhost/aiops/node-base:24, so it never stands in for the real node:24-slim), with
// the OCI labels filled in for the version and commit it was built from. Needs buildah (root);
// skips without it locally and fails in CI (AIOPS_REQUIRE_REAL_NODE).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { buildOperatorImage } from '../../scripts/image.ts';
import { imageLabel, NODE_BASE_IMAGE } from '../../scripts/lib/images.ts';
import { REQUIRE_REAL_NODE, skipUnlessRequired } from '../harness/required.ts';

function missing(): string | undefined {
  if (process.getuid?.() !== 0) return 'building images with buildah needs root';
  try {
    execFileSync('buildah', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'buildah is not installed';
  }
}

const skip = skipUnlessRequired(REQUIRE_REAL_NODE, missing());

test(
  'the image carries its version, commit and base in OCI labels, on a base that shadows no real image',
  { skip },
  () => {
    const image = buildOperatorImage({ log: () => undefined });
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const label = (key: string): string | undefined => imageLabel(image, `org.opencontainers.image.${key}`);
    assert.equal(label('version'), pkg.version);
    assert.match(label('revision') ?? '', /^[0-9a-f]{40}$/);
    assert.equal(label('licenses'), 'Apache-2.0');
    assert.equal(label('base.name'), NODE_BASE_IMAGE);
    assert.match(NODE_BASE_IMAGE, /^localhost\//, 'the locally made base is named as local');
  },
);
