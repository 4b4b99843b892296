// `kubectl aiops force-finalize NAME`: reads the stuck AITask, the operator's leader Lease
// and the nodes its finalizer still owes, prints the plan (dry run by default) and, with
// --yes, uncordons those nodes (each only while it carries the AITask's mark, bound to the
// node as read) and removes the finalizer with a resourceVersion-bound patch. The nodes are
// read with one paginated LIST (the marks say which are owed), never one GET per name of
// status.cordonedNodes, which anyone who may write aitasks/status fills: a user who may not
// list nodes gets GETs of the first FALLBACK_LOOKUPS names only, LOOKUP_CONCURRENCY at a time
// and none started after --request-timeout.

import { mapWithLimits } from '../../lib/bounded-concurrency.ts';
import { cordonHeldBy, uncordonPatch } from '../../api/cordon.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { leaseLiveness, type Lease } from '../../lib/lease-liveness.ts';
import { CliError, ExitCode, ifFound, RefusedError, UsageError } from '../errors.ts';
import {
  judgeLeases,
  planFinalize,
  planHasWork,
  type FinalizePlan,
  type OperatorEvidence,
} from '../finalize-plan.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { age, table, visible, visibleDeep, type Palette } from '../format.ts';
import { Resources, type NodeLike } from '../kinds.ts';
import type { CommandContext } from '../context.ts';
import { parseRequestTimeout } from '../flags.ts';
import { getTask, type Session } from '../session.ts';

/** What --yes did. */
interface Outcome {
  uncordoned: string[];
  removedFinalizers: string[];
  deleted: boolean;
}

/** Install namespaces tried by name when Leases cannot be listed across namespaces (plain manifests, OLM). */
const INSTALL_NAMESPACES = [DEFAULT_INSTALL.namespace, 'operators'];

/** The Lease `ns/name`; a Forbidden read is evidence of nothing (`unknown`). */
async function readLease(
  leases: ResourceClient<Lease>,
  ns: string,
  name: string,
  now: Date,
): Promise<OperatorEvidence> {
  const lease = `${ns}/${name}`;
  try {
    return { ...leaseLiveness(await leases.get(ns, name), now), lease };
  } catch (err) {
    if (err instanceof NotFoundError) return { ...leaseLiveness(undefined, now), lease };
    if (err instanceof ForbiddenError)
      return { verdict: 'unknown', message: `cannot read the leader Lease: ${err.message}`, lease };
    throw err;
  }
}

/**
 * Liveness from the operator's Lease: in `ns` when given (--lease-namespace), else found by
 * name in every namespace. When Leases cannot be listed across namespaces, only a live Lease
 * in a usual install namespace counts as evidence; anything else is `unknown`.
 */
async function evidence(
  s: Session,
  ns: string | undefined,
  name: string,
  now: Date,
): Promise<OperatorEvidence> {
  const leases = new ResourceClient<Lease>(s.transport, Resources.leases);
  if (ns !== undefined) return readLease(leases, ns, name, now);
  try {
    const found = await leases.listAll(undefined, { fieldSelector: `metadata.name=${name}` });
    return judgeLeases(found.items, name, now);
  } catch (err) {
    if (!(err instanceof ForbiddenError)) throw err;
  }
  const tried = await Promise.all(INSTALL_NAMESPACES.map((n) => readLease(leases, n, name, now)));
  return (
    tried.find((e) => e.verdict === 'alive') ?? {
      verdict: 'unknown',
      message: `Leases cannot be listed across namespaces (Forbidden) and none named ${name} is alive in ${INSTALL_NAMESPACES.join(' or ')}, so the operator may be running elsewhere`,
      lease: `*/${name}`,
    }
  );
}

/** Node GETs in flight at once when nodes cannot be listed: 8. */
export const LOOKUP_CONCURRENCY = 8;

/** Names of status.cordonedNodes read one by one when nodes cannot be listed: 64. */
export const FALLBACK_LOOKUPS = 64;

/**
 * The cluster's nodes from one paginated LIST (`complete`); when listing nodes is Forbidden,
 * GETs of the first FALLBACK_LOOKUPS of `names`, LOOKUP_CONCURRENCY at a time, none started
 * after `deadlineMs` (0: none), the rest not looked up.
 */
async function readNodes(
  s: Session,
  names: readonly string[],
  deadlineMs: number,
): Promise<{ nodes: Map<string, NodeLike | undefined>; complete: boolean }> {
  const client = new ResourceClient<NodeLike>(s.transport, Resources.nodes);
  try {
    const all = await client.listAll(undefined);
    return { nodes: new Map(all.items.map((n) => [n.metadata?.name ?? '', n] as const)), complete: true };
  } catch (err) {
    if (!(err instanceof ForbiddenError)) throw err;
  }
  const run = await mapWithLimits(
    names.slice(0, FALLBACK_LOOKUPS),
    { concurrency: LOOKUP_CONCURRENCY, deadlineMs: deadlineMs > 0 ? deadlineMs : Infinity },
    (n) => ifFound(client.get(undefined, n)),
  );
  return { nodes: new Map(run.done.map((r) => [r.item, r.result] as const)), complete: false };
}

async function apply(s: Session, plan: FinalizePlan, taskUID: string | undefined): Promise<Outcome> {
  const nodes = new ResourceClient<NodeLike>(s.transport, Resources.nodes);
  const uncordoned: string[] = [];
  for (const step of plan.cleanup.filter((c) => c.action === 'uncordon')) {
    const live = await ifFound(nodes.get(undefined, step.node));
    if (!cordonHeldBy(live, taskUID)) continue;
    try {
      await nodes.patch(undefined, step.node, uncordonPatch(live?.metadata?.resourceVersion ?? ''));
    } catch (err) {
      if (err instanceof ConflictError)
        throw new CliError(
          `node/${step.node} changed while it was being uncordoned; nothing else was done: run force-finalize again`,
        );
      throw err;
    }
    uncordoned.push(step.node);
  }
  const removed = plan.finalizers.filter((f) => f.action === 'remove').map((f) => f.name);
  if (removed.length === 0) return { uncordoned, removedFinalizers: [], deleted: false };
  const keep = plan.finalizers.filter((f) => f.action === 'keep').map((f) => f.name);
  try {
    await s.tasks.patch(plan.namespace, plan.name, {
      metadata: { finalizers: keep, resourceVersion: plan.resourceVersion },
    });
  } catch (err) {
    if (err instanceof ConflictError)
      throw new CliError(
        `aitask "${plan.name}" in namespace "${plan.namespace}" changed since it was read (resourceVersion ${plan.resourceVersion}); nothing was removed: run force-finalize again to see its current state`,
      );
    if (err instanceof NotFoundError) return { uncordoned, removedFinalizers: [], deleted: true };
    throw err;
  }
  const deleted = (await ifFound(s.tasks.get(plan.namespace, plan.name))) === undefined;
  return { uncordoned, removedFinalizers: removed, deleted };
}

/** The plan as text; every string read from the cluster is shown through `visible`. */
function renderPlan(read: FinalizePlan, now: Date, pal: Palette, dryRun: boolean): string {
  const plan = visibleDeep(read);
  const del = plan.deletionTimestamp;
  const head = `aitask "${plan.name}" in namespace "${plan.namespace}": ${del ? pal.red(`Terminating for ${age(del, now)}`) : 'not being deleted'} (resourceVersion ${plan.resourceVersion})\n`;
  const fin = plan.finalizers.length
    ? table(
        ['Finalizer', 'Action'],
        plan.finalizers.map((f) => [
          f.name,
          f.action === 'remove' ? pal.yellow('remove') : 'keep (pass --all to remove)',
        ]),
        '  ',
      )
    : '  <none>\n';
  const op = plan.operator;
  const verdict = op.verdict === 'alive' ? pal.green(op.verdict) : pal.red(op.verdict);
  const cleanup = plan.cleanup.length
    ? table(
        ['Node', 'Action', 'Why'],
        plan.cleanup.map((c) => [c.node, c.action === 'uncordon' ? pal.yellow('uncordon') : 'skip', c.why]),
        '  ',
      )
    : '  <none>\n';
  const omitted =
    plan.cleanupOmitted > 0
      ? `  … and ${plan.cleanupOmitted} more listed in status.cordonedNodes, all skipped\n`
      : '';
  const tail =
    dryRun && !plan.refusal
      ? `\nDry run: nothing changed. Re-run with --yes to ${planHasWork(plan) ? 'apply this plan' : 'confirm'}.\n`
      : '';
  return `${head}Finalizers:\n${fin}Operator: ${verdict}: ${op.message} (Lease ${op.lease})\nCleanup owed:\n${cleanup}${omitted}${tail}`;
}

/** Runs `force-finalize`. */
export async function forceFinalize(
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const [name] = args;
  if (name === undefined) throw new UsageError('force-finalize needs the AITask NAME');
  const flags = {
    force: opts['force'] === true,
    all: opts['all'] === true,
    skipCleanup: opts['skipCleanup'] === true,
  };
  const yes = opts['yes'] === true;
  const s = await ctx.session();
  const now = ctx.io.now();
  const task = await getTask(s, s.namespace, name);
  const nodeNames = task.status?.cordonedNodes ?? [];
  const [operator, read] = await Promise.all([
    evidence(
      s,
      typeof opts['leaseNamespace'] === 'string' ? opts['leaseNamespace'] : undefined,
      String(opts['leaseName']),
      now,
    ),
    readNodes(s, nodeNames, parseRequestTimeout(ctx.globals.requestTimeout)),
  ]);
  const plan = planFinalize({ task, operator, ...read }, flags);
  const machine = ctx.machine;
  const print = (doc: unknown): void => ctx.printDoc(doc);
  if (plan.refusal !== undefined || !yes) {
    if (machine) print({ dryRun: true, plan });
    else ctx.io.out(renderPlan(plan, now, ctx.pal, true));
    if (plan.refusal !== undefined) throw new RefusedError(plan.refusal);
    return ExitCode.Ok;
  }
  const outcome = await apply(s, plan, task.metadata.uid);
  if (machine) print({ dryRun: false, plan, outcome });
  else {
    ctx.io.out(renderPlan(plan, now, ctx.pal, false));
    for (const n of outcome.uncordoned) ctx.io.out(`node/${visible(n)} uncordoned\n`);
    for (const f of outcome.removedFinalizers) ctx.io.out(`finalizer ${visible(f)} removed\n`);
    ctx.io.out(
      outcome.deleted
        ? `aitask "${plan.name}" deleted\n`
        : `aitask "${plan.name}" still exists (finalizers left: ${
            plan.finalizers
              .filter((f) => f.action === 'keep')
              .map((f) => visible(f.name))
              .join(', ') || 'none'
          })\n`,
    );
  }
  return ExitCode.Ok;
}
