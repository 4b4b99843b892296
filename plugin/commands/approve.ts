// `kubectl aiops approve NAME`: approves the decision an AITask with `approval: Manual`
// keeps waiting in status.pendingDecision, by setting the annotation
// aiops.example.com/approve to that decision's id. The operator executes that decision once
// and removes the annotation. Refused (exit 3) when no decision waits, or when `--id` names
// another one; the write is bound to the resourceVersion read, so a decision that changed
// in between is never approved by accident.

import { APPROVE_ANNOTATION } from '../../api/install.ts';
import { ConflictError } from '../../api/kube/errors.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { CliError, ExitCode, RefusedError, UsageError } from '../errors.ts';
import { jsonDoc, yamlDoc } from '../format.ts';
import type { CommandContext } from '../context.ts';
import { getTask } from '../session.ts';

/** One line for a decision: "ScaleUp 2 → 3", "CordonNode". */
function what(d: v2.DecisionRecord): string {
  const e = d.effect;
  return e?.replicas !== undefined && e.fromReplicas !== undefined
    ? `${d.action} ${e.fromReplicas} → ${e.replicas}`
    : d.action;
}

/** Runs `approve`. */
export async function approve(
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const [name] = args;
  if (name === undefined) throw new UsageError('approve needs the AITask NAME');
  const wanted = typeof opts['id'] === 'string' ? opts['id'] : undefined;
  const s = await ctx.session();
  const task = await getTask(s, s.namespace, name);
  const ns = task.metadata.namespace ?? s.namespace;
  const pending = task.status?.pendingDecision;
  if (pending?.blockedBy !== 'AwaitingApproval')
    throw new RefusedError(
      `aitask "${name}" in namespace "${ns}" has no decision waiting for approval (phase ${task.status?.phase ?? 'Pending'}); nothing to approve`,
    );
  if (wanted !== undefined && wanted !== pending.id)
    throw new RefusedError(
      `the decision waiting on aitask "${name}" is ${pending.id} (${what(pending)}), not ${wanted}; check it with: kubectl aiops describe ${name} -n ${ns}`,
    );
  try {
    await s.tasks.patch(ns, name, {
      metadata: {
        resourceVersion: task.metadata.resourceVersion,
        annotations: { [APPROVE_ANNOTATION]: pending.id },
      },
    });
  } catch (err) {
    if (err instanceof ConflictError)
      throw new CliError(
        `aitask "${name}" changed while approving; nothing was approved — run the command again to see the current decision`,
      );
    throw err;
  }
  const doc = { name, namespace: ns, approved: pending };
  if (ctx.format === 'json') ctx.io.out(jsonDoc(doc));
  else if (ctx.format === 'yaml') ctx.io.out(yamlDoc(doc));
  else
    ctx.io.out(
      `aitask "${name}" decision ${pending.id} (${what(pending)}) approved; the operator executes it once and removes ${APPROVE_ANNOTATION}\n`,
    );
  return ExitCode.Ok;
}
