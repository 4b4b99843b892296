// `kubectl aiops explain-phase [NAME]`: the plain-language account of why an AITask is in
// its phase (api/status/explain.ts), for one object or as one line per object.

import { explainPhase } from '../../api/status/explain.ts';
import { ExitCode, UsageError } from '../errors.ts';
import { renderExplanation, renderExplanationList } from '../explain-text.ts';
import { resourceName } from '../flags.ts';
import type { CommandContext } from '../context.ts';
import { getTask, listTasks } from '../session.ts';

/** Runs `explain-phase`. */
export async function explainPhaseCommand(
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const [name] = args;
  const all = opts['allNamespaces'] === true;
  if (name !== undefined && all) throw new UsageError('a NAME cannot be combined with -A/--all-namespaces');
  const s = await ctx.session();
  const now = ctx.io.now();
  if (name !== undefined) {
    const e = explainPhase(await getTask(s, s.namespace, name));
    if (ctx.machine) ctx.printDoc(e);
    else if (ctx.format === 'name') ctx.io.out(`${resourceName(e.name)}\n`);
    else ctx.io.out(renderExplanation(e, now, ctx.pal));
    return ExitCode.Ok;
  }
  const list = (await listTasks(s, s.namespace, all)).map(explainPhase);
  if (ctx.machine) ctx.printDoc({ items: list });
  else if (list.length === 0)
    ctx.io.err(all ? 'No AITasks found.\n' : `No AITasks found in ${s.namespace} namespace.\n`);
  else if (ctx.format === 'name') ctx.io.out(list.map((e) => `${resourceName(e.name)}\n`).join(''));
  else ctx.io.out(renderExplanationList(list, now, ctx.pal, all, ctx.format === 'wide'));
  return ExitCode.Ok;
}
