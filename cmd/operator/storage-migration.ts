// --migrate-storage-on-start as a runnable of the operator process: rewrite every AITask at
// the storage version and trim the CRD's storedVersions once the operator's endpoints
// listen (with the hosted webhook, the pod must be Ready before its Service reaches it, and
// migrating needs the webhook). Idempotent and safe on every replica at once.

import { CRD_NAME } from '../../api/schema/common.ts';
import { migrateStorage, MigrationRefused } from '../../api/upgrade/migrate.ts';
import { ForbiddenError, InvalidError, UnauthorizedError } from '../../lib/kube/errors.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { Logger } from '../../lib/log.ts';
import { PART } from '../../operator/assembly-parts.ts';
import type { Runnable } from '../../operator/runtime/manager.ts';

/**
 * The migration, retried until it succeeds or `signal` aborts: a refusal (the conversion
 * webhook not reachable yet) or any other error a retry can fix is logged and retried after
 * 5 s, doubling up to 5 min. Forbidden, Unauthorized and Invalid cannot be fixed by retrying
 * (the RBAC or the CRD is wrong): the promise then resolves with the message. Resolves
 * undefined when done or aborted.
 */
export async function migrateOnStart(
  transport: () => Promise<KubeTransport>,
  log: Logger,
  signal: AbortSignal,
): Promise<string | undefined> {
  for (let delayMs = 5_000; !signal.aborted; delayMs = Math.min(delayMs * 2, 300_000)) {
    try {
      const r = await migrateStorage(await transport(), {
        signal,
        onProgress: (p) => log.info('storage migration progress', { ...p }),
      });
      log.info('storage migration done', {
        seen: r.seen,
        rewritten: r.rewritten,
        storedVersions: r.storedVersionsAfter,
      });
      return undefined;
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof ForbiddenError || err instanceof UnauthorizedError || err instanceof InvalidError) {
        log.error('storage migration failed and cannot succeed by retrying', { err: message });
        return message;
      }
      log[err instanceof MigrationRefused ? 'warn' : 'error']('storage migration not done yet; retrying', {
        err: message,
        retryInMs: delayMs,
      });
    }
    await new Promise<void>((r) => {
      const timer = setTimeout(r, delayMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        r();
      });
    });
  }
  return undefined;
}

/**
 * The migration as a runnable, started once the endpoints listen. A migration the user asked
 * for that cannot happen fails the part with one line saying why, and the process exits 1
 * (a failing pod, not one that runs on and leaves storedVersions for a later upgrade).
 */
export function storageMigrationPart(transport: () => Promise<KubeTransport>, log: Logger): Runnable {
  return {
    name: 'storage-migration',
    startAfter: [PART.servers],
    async run(signal, ready) {
      ready();
      const failure = await migrateOnStart(transport, log.with({ component: 'storage-migration' }), signal);
      if (failure !== undefined)
        throw new Error(
          `--migrate-storage-on-start failed, stopping: ${failure} (it needs update on aitasks and on customresourcedefinitions/status of ${CRD_NAME}, as the shipped RBAC grants; or drop the flag)`,
        );
    },
  };
}
