// `kubectl aiops describe [NAME]`: reads the AITask, its target (as its kind says: a
// Deployment or StatefulSet itself, any other kind's /scale) and its Events
// (by involvedObject uid) and prints the describe view; without NAME, every AITask in the
// namespace (or, with -A, the cluster).

import { ForbiddenError, NotFoundError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { describeView, eventRows, type DescribeView } from '../describe-view.ts';
import { renderDescribe } from '../describe-text.ts';
import { ExitCode, UsageError } from '../errors.ts';
import { resourceName } from '../flags.ts';
import { Resources, type KubeEventLike } from '../kinds.ts';
import type { CommandContext } from '../context.ts';
import { getTask, listTasks, type Session } from '../session.ts';
import { targetNamespace } from '../../api/schema/target.ts';
import { readTarget, TargetKindError } from '../target.ts';
import { targetHealth, type TargetHealth } from '../target-health.ts';

async function health(s: Session, task: v2.AITask): Promise<TargetHealth> {
  const ns = targetNamespace(task) || s.namespace;
  try {
    return targetHealth(await readTarget(s, task.spec.target, ns, task.spec.target.name));
  } catch (err) {
    if (err instanceof NotFoundError) return { found: false };
    if (err instanceof TargetKindError) return { found: false, error: `cannot be read: ${err.detail}` };
    if (err instanceof ForbiddenError) return { found: false, error: `cannot be read: ${err.message}` };
    throw err;
  }
}

async function events(s: Session, task: v2.AITask): Promise<KubeEventLike[]> {
  const uid = task.metadata.uid;
  if (uid === undefined) return [];
  try {
    const list = await new ResourceClient<KubeEventLike>(s.transport, Resources.coreEvents).listAll(
      task.metadata.namespace,
      {
        fieldSelector: `involvedObject.uid=${uid}`,
      },
    );
    return list.items;
  } catch (err) {
    if (err instanceof ForbiddenError) return [];
    throw err;
  }
}

/** Builds the view of one AITask with its target and Events read in parallel. */
export async function viewOf(s: Session, task: v2.AITask): Promise<DescribeView> {
  const [h, ev] = await Promise.all([health(s, task), events(s, task)]);
  return describeView(task, h, eventRows(ev));
}

/** Runs `describe`. */
export async function describe(
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const [name] = args;
  const all = opts['allNamespaces'] === true;
  if (name !== undefined && all) throw new UsageError('a NAME cannot be combined with -A/--all-namespaces');
  const s = await ctx.session();
  const tasks =
    name !== undefined ? [await getTask(s, s.namespace, name)] : await listTasks(s, s.namespace, all);
  const views = await Promise.all(tasks.map((t) => viewOf(s, t)));
  if (ctx.machine) {
    ctx.printDoc(name !== undefined ? views[0] : { items: views });
    return ExitCode.Ok;
  }
  if (views.length === 0) {
    ctx.io.err(all ? 'No AITasks found.\n' : `No AITasks found in ${s.namespace} namespace.\n`);
    return ExitCode.Ok;
  }
  if (ctx.format === 'name') {
    ctx.io.out(views.map((v) => `${resourceName(v.name)}\n`).join(''));
    return ExitCode.Ok;
  }
  const now = ctx.io.now();
  ctx.io.out(views.map((v) => renderDescribe(v, now, ctx.pal, ctx.format === 'wide')).join('\n\n'));
  return ExitCode.Ok;
}
