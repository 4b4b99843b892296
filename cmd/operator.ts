// The operator process as deployed (`npm run operator`, dist/operator/main.mjs, the image):
// parses the operator's flags and the hosted webhook's, builds the process' parts
// (cmd/operator/process.ts) and starts them. Exit codes: 2 on a bad flag, 1 when a part
// fails (it cannot start, leadership is lost, the startup migration cannot happen), 0 after
// SIGTERM or SIGINT. SIGTERM keeps the hosted webhook answering for --webhook-shutdown-delay
// while the rest stops; SIGINT, or a second signal, stops at once.

import { hostname } from 'node:os';
import { CommanderError } from 'commander';
import { OPERATOR_TABLE, operatorCommand, operatorOptions } from '../operator/command.ts';
import { LeadershipLost } from '../operator/assembly-parts.ts';
import { HOSTED_TABLE } from './operator/flags.ts';
import { operatorProcess } from './operator/process.ts';

async function main(): Promise<void> {
  const command = operatorCommand(HOSTED_TABLE);
  await command.parseAsync(process.argv);
  const o = operatorOptions(OPERATOR_TABLE.values(command));
  const hosted = HOSTED_TABLE.values(command);
  const manager = await operatorProcess(o, hosted);
  let stopping = false;
  /** Stops every part (the hosted webhook after `drainMs`) and exits with `code`; a second call exits at once. */
  const stop = async (code: number, drainMs = 0): Promise<never> => {
    if (!stopping) {
      stopping = true;
      o.log.info('stopping: finishing in-flight reconciles');
      await manager.stop({ drainMs });
      o.log.info('stopped');
    }
    process.exit(code);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    process.on(sig, () => {
      o.log.info('signal received', { signal: sig, host: hostname() });
      void stop(0, sig === 'SIGTERM' ? hosted.webhookShutdownDelay * 1000 : 0);
    });
  manager.start();
  const failure = await manager.failed;
  if (!(failure.error instanceof LeadershipLost))
    process.stderr.write(`operator: ${failure.error.message}\n`);
  await stop(1);
}

main().catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`operator: ${(err as Error).message}\n`);
  process.exit(1);
});
