// `kubectl aiops approve NAME [--id DECISION]`: shows exactly what approving the decision an
// AITask with `approval: Manual` waits on would make the operator do — action, target (read as
// its kind says; another kind than Deployment and StatefulSet through its /scale) and its
// UID, pod or node, replicas from → to — and, given the id of that same
// decision (`--id`, the one it showed), approves it by setting the annotation
// aiops.example.com/approve to the id. Without --id nothing is approved. Refused (exit 3)
// when no decision waits, another one than --id waits, or anything shown changed since the
// decision was made (approval-plan.ts); the write is bound to the resourceVersion read. The
// operator executes the decision once, only while all of it still holds, and removes the
// annotation.

import { APPROVE_ANNOTATION } from '../../api/install.ts';
import { ConflictError, ForbiddenError } from '../../lib/kube/errors.ts';
import { checkApproval, type ApprovalPlan, type LiveWorkload } from '../approval-plan.ts';
import { CliError, ExitCode, ifFound, RefusedError, UsageError } from '../errors.ts';
import { visibleDeep } from '../format.ts';
import type { CommandContext } from '../context.ts';
import { getTask, type Session } from '../session.ts';
import { builtinKind, targetApiVersion, targetNamespace, type TargetType } from '../../api/schema/target.ts';
import { readTarget, workloadRef } from '../target.ts';

/**
 * The target as read now, as `target` says; undefined when absent. Throws CliError when the
 * user may not read it, and TargetKindError when its kind serves no /scale.
 */
async function liveTarget(
  s: Session,
  target: TargetType,
  namespace: string,
  name: string,
): Promise<LiveWorkload | undefined> {
  try {
    return (await ifFound(readTarget(s, target, namespace, name)))?.object;
  } catch (err) {
    if (err instanceof ForbiddenError)
      throw new CliError(
        `cannot read ${workloadRef(target, namespace, name)} to show what the approval would do: ${err.message}`,
      );
    throw err;
  }
}

/** The plan as text, every value shown through `visible`. */
function renderPlan(read: ApprovalPlan): string {
  const p = visibleDeep(read);
  const rows: [string, string][] = [
    ['Action', p.action],
    [
      p.target.kind,
      `${p.target.namespace}/${p.target.name} (${builtinKind(p.target) === undefined ? `${targetApiVersion(p.target)}, ` : ''}uid ${p.target.uid ?? '<not found>'})`,
    ],
    ...(p.replicas ? ([['Replicas', `${p.replicas.from} → ${p.replicas.to}`]] as [string, string][]) : []),
    ...(p.pod !== undefined ? ([['Pod', p.pod]] as [string, string][]) : []),
    ...(p.node !== undefined ? ([['Node', p.node]] as [string, string][]) : []),
    ['Generation', p.generation === undefined ? '<not recorded>' : String(p.generation)],
    ['Reason', p.reason],
  ];
  return (
    `aitask "${p.name}" in namespace "${p.namespace}" waits on decision ${p.id}:\n` +
    rows.map(([k, v]) => `  ${`${k}:`.padEnd(13)}${v}\n`).join('')
  );
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
  const targetNs = task.status?.pendingDecision?.target?.namespace ?? (targetNamespace(task) || ns);
  const targetName = task.status?.pendingDecision?.target?.name ?? task.spec.target.name;
  const check = checkApproval(
    { ...task, metadata: { ...task.metadata, namespace: ns } },
    await liveTarget(s, task.spec.target, targetNs, targetName),
    wanted,
  );
  const machine = ctx.machine;
  if (check.plan === undefined) throw new RefusedError(check.refusal);
  const plan = check.plan;
  const print = (approved: boolean): void => {
    const doc = { name, namespace: ns, approved, decision: plan };
    if (machine) ctx.printDoc(doc);
    else ctx.io.out(renderPlan(plan));
  };
  if (check.refusal !== undefined) {
    print(false);
    throw new RefusedError(check.refusal);
  }
  if (wanted === undefined) {
    print(false);
    if (!machine)
      ctx.io.out(
        `Not approved. To approve exactly this decision, run:\n  kubectl aiops approve ${name} -n ${ns} --id ${plan.id}\n`,
      );
    return ExitCode.Ok;
  }
  try {
    await s.tasks.patch(ns, name, {
      metadata: {
        resourceVersion: task.metadata.resourceVersion,
        annotations: { [APPROVE_ANNOTATION]: plan.id },
      },
    });
  } catch (err) {
    if (err instanceof ConflictError)
      throw new CliError(
        `aitask "${name}" changed while approving; nothing was approved — run the command again to see the current decision`,
      );
    throw err;
  }
  print(true);
  if (!machine)
    ctx.io.out(
      `Approved: the operator executes decision ${plan.id} once, only while all of the above still holds, and removes ${APPROVE_ANNOTATION}\n`,
    );
  return ExitCode.Ok;
}
