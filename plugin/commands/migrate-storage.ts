// `kubectl aiops migrate-storage`: moves every stored AITask to the storage version and
// trims the CRD's status.storedVersions, the step that makes a later release allowed to
// stop serving an old version. Dry run with --dry-run; progress per page on stderr; a
// killed run is finished by running it again. Refuses (exit 3) while conversion fails.

import { migrateStorage, MigrationRefused, type MigrationResult } from '../../api/upgrade/migrate.ts';
import { ExitCode, RefusedError } from '../errors.ts';
import { visibleDeep } from '../format.ts';
import type { CommandContext } from '../context.ts';

/** Runs `migrate-storage`. */
export async function migrateStorageCommand(
  ctx: CommandContext,
  _args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const s = await ctx.session();
  const dryRun = opts['dryRun'] === true;
  const pageSize = typeof opts['pageSize'] === 'number' ? opts['pageSize'] : undefined;
  let migrated: MigrationResult;
  try {
    migrated = await migrateStorage(s.transport, {
      dryRun,
      ...(pageSize !== undefined ? { pageSize } : {}),
      onProgress: (p) => {
        ctx.io.err(
          `${dryRun ? 'would rewrite' : 'migrated'} ${p.seen} AITasks (${p.rewritten} rewritten, ${p.vanished} deleted meanwhile)\n`,
        );
      },
    });
  } catch (err) {
    if (err instanceof MigrationRefused) throw new RefusedError(err.message);
    throw err;
  }
  if (ctx.machine) ctx.printDoc({ ...migrated });
  else {
    const result = visibleDeep(migrated);
    const verb = dryRun ? 'would be rewritten at' : 'now stored at';
    ctx.io.out(
      `${result.seen} AITasks ${verb} ${result.storageVersion}` +
        (dryRun
          ? ''
          : ` (${result.rewritten} rewritten, ${result.seen - result.rewritten - result.vanished} already current)`) +
        `\nstoredVersions: ${result.storedVersionsBefore.join(', ') || '(none)'}` +
        (dryRun
          ? ` (would become ${result.storageVersion})\n`
          : ` → ${result.storedVersionsAfter.join(', ')}\n`),
    );
  }
  return ExitCode.Ok;
}
