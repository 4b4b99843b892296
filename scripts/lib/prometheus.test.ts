// Where `npm start` and the tests take Prometheus from: AIOPS_PROMETHEUS_BIN, then the one
// build-control-plane.sh built into the cache (the pinned version), then PATH; with none, a
// one-line error that says how to get one. Real executables in temp dirs, no Prometheus run.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensurePrometheus, findPrometheus, prometheusBinary } from './prometheus.ts';

/** A dir holding an executable `prometheus` stub. */
function dirWithPrometheus(root: string, name: string): { dir: string; bin: string } {
  const dir = join(root, name);
  mkdirSync(dir);
  const bin = join(dir, 'prometheus');
  writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
  return { dir, bin };
}

test('Prometheus lookup: env var, then the built one, then PATH, else how to get it', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'aiops-prometheus-lookup-'));
  const saved = { ...process.env };
  t.after(() => {
    process.env = saved;
    rmSync(root, { recursive: true, force: true });
  });
  const built = dirWithPrometheus(root, 'cache-bin');
  const onPath = dirWithPrometheus(root, 'path-bin');
  const explicit = dirWithPrometheus(root, 'explicit');
  const empty = join(root, 'empty');
  mkdirSync(empty);
  delete process.env['AIOPS_PROMETHEUS_BIN'];

  process.env['AIOPS_BIN_DIR'] = built.dir;
  process.env['PATH'] = onPath.dir;
  assert.equal(findPrometheus(), built.bin, 'the built (pinned) one comes before PATH');

  process.env['AIOPS_BIN_DIR'] = empty;
  assert.equal(findPrometheus(), onPath.bin);
  assert.equal(await ensurePrometheus(() => assert.fail('nothing to build')), onPath.bin);

  process.env['AIOPS_PROMETHEUS_BIN'] = explicit.bin;
  assert.equal(prometheusBinary(), explicit.bin, 'the env var wins');
  process.env['AIOPS_PROMETHEUS_BIN'] = join(empty, 'prometheus');
  assert.throws(() => findPrometheus(), /AIOPS_PROMETHEUS_BIN=.* is not an executable file/);

  delete process.env['AIOPS_PROMETHEUS_BIN'];
  process.env['PATH'] = empty;
  assert.equal(findPrometheus(), undefined);
  assert.throws(
    () => prometheusBinary(),
    (err: Error) =>
      !err.message.includes('\n') &&
      /build-control-plane\.sh prometheus/.test(err.message) &&
      /apt-get install prometheus/.test(err.message) &&
      /AIOPS_PROMETHEUS_BIN/.test(err.message),
  );
});
