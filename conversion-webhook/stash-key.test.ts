// The standalone webhook's key file: created once with 32 random bytes and mode 0600, the
// same key on every later load, and a file too short to be a key refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultStashKeyFile, loadOrCreateStashKey } from './stash-key.ts';

test('the key file is created once, private, and read back the same', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-stash-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = defaultStashKeyFile(dir);
  const first = loadOrCreateStashKey(file);
  assert.equal(first.length, 32);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(loadOrCreateStashKey(file), first, 'a restart reads the same key');
  writeFileSync(join(dir, 'short'), 'too short');
  assert.throws(() => loadOrCreateStashKey(join(dir, 'short')), /holds 9 bytes; .* at least 32/);
  assert.throws(() => loadOrCreateStashKey(join(dir, 'missing-dir', 'k')), /ENOENT/);
});
