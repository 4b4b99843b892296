// Entry point of `kubectl aiops` (the bundled dist/kubectl-aiops runs this): turns on V8's
// on-disk compile cache for faster starts, wires the process' streams and environment into
// the command line, and exits with its code. A closed stdout (`| head`) ends quietly.

import { enableCompileCache } from 'node:module';
import { run } from '../plugin/program.ts';

enableCompileCache();
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// No top-level await: the single executable (scripts/build.ts) runs this as CommonJS.
void run(process.argv.slice(2), {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  isTTY: process.stdout.isTTY,
  errIsTTY: process.stderr.isTTY,
  ...(process.stdout.isTTY ? { columns: process.stdout.columns } : {}),
  env: process.env,
  now: () => new Date(),
}).then((code) => {
  process.exitCode = code;
});
