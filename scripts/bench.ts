// `npm run bench`: performance measured side by side. Starts the shared
// environment once and runs each section, which prints its numbers and its ratio
// against a baseline measured in the same run. Never used as a pass/fail gate.
//
// Usage: npm run bench [-- SECTION...]   sections: conversion, plugin, operator, memory, deployed, llm, peer (default: all);
// memory-oversized runs only memory's measure of 1,500 AITasks with 250 KiB annotations;
// steady (10,000 AITasks in steady state beside the Go peer, ~30 minutes on 2 cores) runs
// only when named.

import { startEnvironment } from '../test/support/environment.ts';
import { bench as conversion } from '../test/bench/conversion.ts';
import { bench as plugin } from '../test/bench/plugin.ts';
import { bench as operator } from '../test/bench/operator.ts';
import { bench as memory } from '../test/bench/memory.ts';
import { bench as deployed } from '../test/bench/deployed.ts';
import { bench as llm } from '../test/bench/llm.ts';
import { bench as peer } from '../test/bench/peer.ts';
import { bench as steady } from '../test/bench/steady.ts';
import type { Environment } from '../test/support/environment.ts';

const sections: Record<string, (env: Environment) => Promise<void>> = {
  conversion,
  plugin,
  operator,
  memory,
  deployed,
  llm,
  peer,
};
/** Sections run only when named. */
const named: Record<string, (env: Environment) => Promise<void>> = {
  'memory-oversized': (env) => memory(env, 'oversized'),
  steady,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((s) => !(s in sections) && !(s in named));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown bench section(s): ${unknown.join(', ')}; known: ${[...Object.keys(sections), ...Object.keys(named)].join(', ')}\n`,
  );
  process.exit(2);
}
const env = await startEnvironment((l) => process.stderr.write(`[bench] ${l}\n`));
Object.assign(process.env, env.env);
// Interrupted (Ctrl-C, a timeout's SIGTERM), the cluster and Prometheus go too: they are
// processes of their own and would otherwise outlive the bench.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(`[bench] ${signal}: stopping the environment\n`);
    void env.stop().finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  });
try {
  process.stdout.write(
    `# aiops benchmarks — ${new Date().toISOString()}, node ${process.version}, ${(await import('node:os')).cpus().length} CPUs\n`,
  );
  for (const name of wanted.length > 0 ? wanted : Object.keys(sections))
    await (sections[name] ?? named[name])?.(env);
} finally {
  await env.stop();
}
