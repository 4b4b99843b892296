// Entry point of `kubectl aiops` (the bundled dist/kubectl-aiops runs this): wires the
// process' streams and environment into the command line and exits with its code.

import { run } from './program.ts';

process.exitCode = await run(process.argv.slice(2), {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  isTTY: process.stdout.isTTY,
  env: process.env,
  now: () => new Date(),
});
