// awaitBuild and buildsPending against real marks: none without AIOPS_BUILDS_DIR, the mark's
// text when it is there, a wait that ends when another process (as a .ci/run lane does) writes
// the mark, and builds pending until every target is marked.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { awaitBuild, BUILD_TARGETS, buildEnded, buildsPending } from './pending-builds.ts';

const withDir = (t: { after: (fn: () => void) => void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-builds-'));
  const before = process.env['AIOPS_BUILDS_DIR'];
  process.env['AIOPS_BUILDS_DIR'] = dir;
  t.after(() => {
    if (before === undefined) delete process.env['AIOPS_BUILDS_DIR'];
    else process.env['AIOPS_BUILDS_DIR'] = before;
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
};

test('without AIOPS_BUILDS_DIR it returns at once', () => {
  const before = process.env['AIOPS_BUILDS_DIR'];
  delete process.env['AIOPS_BUILDS_DIR'];
  try {
    assert.equal(awaitBuild('helm'), undefined);
  } finally {
    if (before !== undefined) process.env['AIOPS_BUILDS_DIR'] = before;
  }
});

test("a mark already there: its text, ok or the lane's failure", (t) => {
  const dir = withDir(t);
  writeFileSync(join(dir, 'helm'), 'ok\n');
  writeFileSync(join(dir, 'olm'), 'failed: the prometheus lane stopped at olm\n');
  assert.equal(awaitBuild('helm'), 'ok');
  assert.equal(awaitBuild('olm'), 'failed: the prometheus lane stopped at olm');
});

test('it waits until a lane in another process writes the mark', async (t) => {
  const dir = withDir(t);
  const tmp = join(dir, '.krew');
  const lane = spawn('sh', ['-c', `sleep 1; echo ok > "${tmp}"; mv "${tmp}" "${join(dir, 'krew')}"`]);
  const exited = new Promise<number | null>((resolve) => lane.on('exit', resolve));
  assert.equal(awaitBuild('krew'), 'ok', 'the mark only the lane writes, a second after it starts');
  assert.equal(await exited, 0);
});

test('builds are pending until every target is marked, ok or failed; never without the directory', (t) => {
  const before = process.env['AIOPS_BUILDS_DIR'];
  delete process.env['AIOPS_BUILDS_DIR'];
  assert.equal(buildsPending(), false);
  assert.ok(BUILD_TARGETS.every(buildEnded));
  if (before !== undefined) process.env['AIOPS_BUILDS_DIR'] = before;
  const dir = withDir(t);
  for (const target of BUILD_TARGETS) {
    assert.equal(buildsPending(), true, `before ${target}`);
    assert.equal(buildEnded(target), false, target);
    writeFileSync(join(dir, target), target === 'olm' ? 'failed: the tools lane stopped at olm\n' : 'ok\n');
    assert.equal(buildEnded(target), true, target);
  }
  assert.equal(buildsPending(), false);
});
