// A release build's base must be pinned by digest: references with a sha256 digest are taken
// (with or without a registry, a port, a tag), any other is refused saying how to pin it; the
// file records exactly one reference among comments; and the release image build refuses
// before building anything when the repository's file records a base without a digest.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BASE_IMAGE_FILE, readBaseImageFile, recordedBase, releaseBase } from './image-base.ts';

const HEX = 'a'.repeat(32) + '0123456789abcdef'.repeat(2);

test('references pinned by a sha256 digest are release bases; any other is refused, saying how to pin it', () => {
  const cases: [string, boolean][] = [
    [`docker.io/library/node:24-slim@sha256:${HEX}`, true],
    [`node:24-slim@sha256:${HEX}`, true],
    [`node@sha256:${HEX}`, true],
    [`registry.example.com:5000/mirror/node:24.1-slim@sha256:${HEX}`, true],
    ['node:24-slim', false],
    ['docker.io/library/node:24-slim', false],
    [`node:24-slim@sha256:${HEX.slice(1)}`, false],
    [`node:24-slim@sha256:${HEX.toUpperCase()}`, false],
    [`node:24-slim@sha512:${HEX}${HEX}`, false],
    [`node:24-slim@${HEX}`, false],
    [`Node:24-slim@sha256:${HEX}`, false],
    ['', false],
  ];
  for (const [reference, pinned] of cases) {
    if (pinned) assert.equal(releaseBase(reference).digest, `sha256:${HEX}`, reference);
    else
      assert.throws(
        () => releaseBase(reference),
        /needs its base pinned by digest .* Pin it as docs\/install\.md says/,
        reference,
      );
  }
});

test('the file records one reference among comments and blank lines', () => {
  assert.equal(recordedBase('# the base\n\n  node:24-slim  \n'), 'node:24-slim');
  assert.throws(() => recordedBase('# nothing\n'), /must hold one image reference, it holds 0/);
  assert.throws(() => recordedBase('node:24\nnode:22\n'), /it holds 2/);
});

test('a release build reads the file and refuses a base without a digest', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-base-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, BASE_IMAGE_FILE), '# base\nnode:24-slim\n');
  assert.throws(() => readBaseImageFile(dir), /image-base\.txt records "node:24-slim"/);
  writeFileSync(join(dir, BASE_IMAGE_FILE), `# base\nnode:24-slim@sha256:${HEX}\n`);
  assert.deepEqual(readBaseImageFile(dir), {
    reference: `node:24-slim@sha256:${HEX}`,
    digest: `sha256:${HEX}`,
  });
});

test("the repository's file records the Dockerfile's base, node:24-slim, by its full name", () => {
  const root = join(import.meta.dirname, '..', '..');
  const recorded = recordedBase(readFileSync(join(root, BASE_IMAGE_FILE), 'utf8'));
  assert.match(recorded, /^docker\.io\/library\/node:24-slim(@sha256:[0-9a-f]{64})?$/);
  assert.match(readFileSync(join(root, 'Dockerfile'), 'utf8'), /^ARG BASE=node:24-slim$/m);
});
