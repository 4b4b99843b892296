// Storage migration: rewrite every AITask so etcd holds it at the current storage
// version, then trim the CRD's status.storedVersions to that version, which is what
// lets a later release stop serving an old version. The same routine backs
// `kubectl aiops migrate-storage` and the operator's opt-in startup task.

import { aitaskResource } from '../aitask-client.ts';
import { CRD_NAME } from '../schema/common.ts';
import { ApiError, ConflictError, NotFoundError } from '../../lib/kube/errors.ts';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';

interface CRDView {
  metadata: { name: string; resourceVersion?: string };
  spec: { versions: { name: string; served: boolean; storage: boolean }[] };
  status?: { storedVersions?: string[] };
}

interface Obj {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface MigrationProgress {
  /** Objects visited so far. */
  seen: number;
  /** Objects whose stored bytes changed (they were at an older version). */
  rewritten: number;
  /** Objects deleted while the migration ran. */
  vanished: number;
}

export interface MigrationResult extends MigrationProgress {
  storageVersion: string;
  storedVersionsBefore: string[];
  storedVersionsAfter: string[];
  dryRun: boolean;
}

export interface MigrationOptions {
  /** Report what would happen; write nothing (default false). */
  dryRun?: boolean;
  /**
   * Objects per LIST page (default ResourceClient.page's: 10, a page of objects as large as
   * etcd stores within 16 MiB; a page answered larger is read again one object at a time).
   */
  pageSize?: number;
  /** Called after every page. */
  onProgress?: (p: MigrationProgress) => void;
  /** Stops between objects when aborted; the CRD status is then left untouched. */
  signal?: AbortSignal;
}

/** Raised when migrating is unsafe or impossible; the message says what to do. */
export class MigrationRefused extends Error {
  override readonly name = 'MigrationRefused';
}

/**
 * Migrates all AITasks to the storage version. Idempotent and resumable: objects already
 * at the storage version are not written again (the apiserver skips byte-identical
 * updates), so a run that was killed is simply run again. Each object is rewritten with
 * a PUT bound to its resourceVersion; a conflict means someone else just wrote it, which
 * already stored it at the storage version. Refuses when a served non-storage version
 * cannot be read (the conversion webhook is unreachable), because writes would then fail.
 */
export async function migrateStorage(
  transport: KubeTransport,
  opts: MigrationOptions = {},
): Promise<MigrationResult> {
  const crds = new ResourceClient<CRDView>(transport, CRD_RESOURCE);
  const crd = await crds.get(undefined, CRD_NAME).catch((err: unknown) => {
    if (err instanceof NotFoundError) throw new MigrationRefused(`the CRD ${CRD_NAME} is not installed`);
    throw err;
  });
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (storage === undefined) throw new MigrationRefused(`the CRD ${CRD_NAME} has no storage version`);
  const before = crd.status?.storedVersions ?? [];
  await probeConversion(transport, crd, storage);

  const tasks = new ResourceClient<Obj>(transport, aitaskResource(storage as 'v2'));
  const progress: MigrationProgress = { seen: 0, rewritten: 0, vanished: 0 };
  let cont: string | undefined;
  do {
    const page = await tasks.page(undefined, {
      ...(opts.pageSize !== undefined ? { limit: opts.pageSize } : {}),
      ...(cont ? { continue: cont } : {}),
    });
    for (const item of page.items) {
      if (opts.signal?.aborted) throw new MigrationRefused('migration aborted; run it again to finish');
      progress.seen++;
      if (opts.dryRun) continue;
      const outcome = await rewrite(tasks, item);
      if (outcome === 'rewritten') progress.rewritten++;
      if (outcome === 'vanished') progress.vanished++;
    }
    opts.onProgress?.({ ...progress });
    cont = page.metadata.continue;
  } while (cont);

  let after = before;
  if (!opts.dryRun && (before.length !== 1 || before[0] !== storage)) {
    const current = await crds.get(undefined, CRD_NAME);
    const updated = await crds.replace(
      undefined,
      CRD_NAME,
      { ...current, status: { ...current.status, storedVersions: [storage] } },
      'status',
    );
    after = updated.status?.storedVersions ?? [];
  }
  return {
    ...progress,
    storageVersion: storage,
    storedVersionsBefore: before,
    storedVersionsAfter: opts.dryRun ? before : after,
    dryRun: opts.dryRun ?? false,
  };
}

async function rewrite(
  tasks: ResourceClient<Obj>,
  item: Obj,
): Promise<'rewritten' | 'unchanged' | 'vanished'> {
  const ns = item.metadata.namespace;
  const name = item.metadata.name ?? '';
  try {
    const written = await tasks.replace(ns, name, item);
    return written.metadata.resourceVersion === item.metadata.resourceVersion ? 'unchanged' : 'rewritten';
  } catch (err) {
    if (err instanceof NotFoundError) return 'vanished';
    if (err instanceof ConflictError) return 'rewritten';
    throw err;
  }
}

async function probeConversion(transport: KubeTransport, crd: CRDView, storage: string): Promise<void> {
  const sample = (
    await new ResourceClient<Obj>(transport, aitaskResource(storage as 'v2')).list(undefined, { limit: 1 })
  ).items[0];
  if (sample === undefined) return;
  for (const v of crd.spec.versions.filter((x) => x.served && x.name !== storage)) {
    try {
      // A GET reads etcd and converts; a LIST may be answered from the watch cache's
      // already-converted copies even when the webhook is down.
      await new ResourceClient<Obj>(transport, aitaskResource(v.name as 'v2')).get(
        sample.metadata.namespace,
        sample.metadata.name ?? '',
      );
    } catch (err) {
      if (err instanceof NotFoundError) continue;
      const why = err instanceof ApiError ? err.message : String(err);
      throw new MigrationRefused(
        `cannot read AITasks at ${v.name}, so the conversion webhook looks unreachable; fix it before migrating (${why})`,
      );
    }
  }
}
