// `npm test`: every test, on the real control plane. Starts the shared environment
// (test/support/environment.ts: cluster, conversion webhook, AITask CRD), runs all
// `*.test.ts` files with node:test, and tears everything down whatever the outcome.
// Files under test/real-node/ share the machine's one real node: they run one at a time,
// in a second node:test process beside the others.
//
// Usage: npm test [-- FILE...]   (default: every *.test.ts outside node_modules and dist)
// Env:   AIOPS_TEST_CONCURRENCY (default 2 files at once), AIOPS_KEEP_CLUSTER=1 keeps the dir.

import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEnvironment } from '../test/support/environment.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg: string) => process.stderr.write(`[test] ${msg}\n`);

const args = process.argv.slice(2);
const files = (
  args.length > 0
    ? args
    : globSync('**/*.test.ts', {
        cwd: root,
        exclude: (f) => f === 'node_modules' || f === 'dist' || f.startsWith('node_modules/'),
      })
).sort();

let code: number;
const env = await startEnvironment(say, process.env['AIOPS_KEEP_CLUSTER'] === '1').catch((err: unknown) => {
  say(`setup failed: ${(err as Error).message}`);
  process.exit(1);
});
try {
  const concurrency = Number(process.env['AIOPS_TEST_CONCURRENCY'] ?? '2');
  const serial = files.filter((f) => f.startsWith('test/real-node/'));
  const parallel = files.filter((f) => !serial.includes(f));
  say(
    `running ${parallel.length} test files, ${concurrency} at a time, and ${serial.length} real-node files one at a time`,
  );
  // One id for both node:test processes, so what is built once per run is built once.
  const runId = `${process.pid}-${Date.now()}`;
  const runFiles = (group: readonly string[], n: number): Promise<number> => {
    if (group.length === 0) return Promise.resolve(0);
    const run = spawn(
      process.execPath,
      ['--test', `--test-concurrency=${n}`, '--test-timeout=900000', ...group],
      {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, ...env.env, AIOPS_TEST_RUN: runId },
      },
    );
    return new Promise<number>((resolve) => run.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  };
  const codes = await Promise.all([
    runFiles(parallel, serial.length > 0 ? Math.max(1, concurrency - 1) : concurrency),
    runFiles(serial, 1),
  ]);
  code = codes.some((c) => c !== 0) ? 1 : 0;
} finally {
  await env.stop();
}
process.exit(code);
