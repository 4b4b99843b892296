// `kubectl aiops generation-diff NAME [FROM [TO]]`: metadata.generation vs
// status.observedGeneration, and the field-level spec diff between two generations read
// from the ControllerRevisions the operator keeps (api/revisions.ts). Exit 0 in sync, 1 differ.

import { ResourceClient } from '../../lib/kube/resources.ts';
import { revisionSelector, sortRevisions, type ControllerRevision } from '../../api/revisions.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { CliError, ExitCode, UsageError } from '../errors.ts';
import { visible } from '../format.ts';
import { Resources } from '../kinds.ts';
import type { CommandContext } from '../context.ts';
import { getTask } from '../session.ts';
import { renderChanges, specChanges, type FieldChange } from '../spec-diff.ts';

/** The machine-readable result (`-o json|yaml|jsonpath=`). */
interface GenerationDiff {
  name: string;
  namespace: string;
  generation: number;
  observedGeneration?: number;
  inSync: boolean;
  from?: number;
  to: number;
  changes: FieldChange[];
  keptGenerations: number[];
  note?: string;
}

function generationArg(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value))
    throw new UsageError(`${what} must be a generation number (1, 2, ...), got "${value}"`);
  return Number(value);
}

/** Runs `generation-diff`. */
export async function generationDiff(ctx: CommandContext, args: string[]): Promise<number> {
  const [name, fromArg, toArg] = args;
  if (name === undefined) throw new UsageError('generation-diff needs the AITask NAME');
  const explicitFrom = generationArg(fromArg, 'FROM');
  const explicitTo = generationArg(toArg, 'TO');
  const s = await ctx.session();
  const task = await getTask(s, s.namespace, name);
  const ns = task.metadata.namespace ?? s.namespace;
  const generation = task.metadata.generation ?? 1;
  const observed = task.status?.observedGeneration;
  const revisions = await new ResourceClient<ControllerRevision>(
    s.transport,
    Resources.controllerRevisions,
  ).listAll(ns, {
    labelSelector: revisionSelector(task.metadata.uid ?? ''),
  });
  const kept = new Map<number, v2.Spec>(sortRevisions(revisions.items).map((r) => [r.generation, r.spec]));
  kept.set(generation, task.spec);
  const keptGenerations = [...kept.keys()].sort((a, b) => a - b);
  const specAt = (g: number): v2.Spec => {
    const spec = kept.get(g);
    if (spec === undefined)
      throw new CliError(
        `generation ${g} of aitask "${name}" in namespace "${ns}" is not kept (kept: ${keptGenerations.join(', ')}); pick one of those`,
      );
    return spec;
  };
  const from = explicitFrom ?? observed;
  const to = explicitTo ?? generation;
  const result: GenerationDiff = {
    name,
    namespace: ns,
    generation,
    ...(observed !== undefined ? { observedGeneration: observed } : {}),
    inSync: observed === generation,
    ...(from !== undefined ? { from } : {}),
    to,
    changes: [],
    keptGenerations,
  };
  if (from === undefined)
    result.note = 'the operator has not observed any generation yet: nothing to diff against';
  else if (explicitFrom === undefined && !kept.has(from))
    result.note = `no ControllerRevision is kept for observed generation ${from} (kept: ${keptGenerations.join(', ')}): the operator records one per generation it observes`;
  else result.changes = specChanges(specAt(from), specAt(to));
  const differ = explicitFrom !== undefined ? result.changes.length > 0 : !result.inSync;
  if (ctx.machine) ctx.printDoc(result);
  else {
    const { pal } = ctx;
    const lag =
      observed === undefined
        ? pal.yellow('never observed')
        : result.inSync
          ? pal.green('in sync')
          : pal.yellow(`lagging by ${generation - observed}`);
    let out = `aitask "${name}" in namespace "${ns}": generation ${generation}, observed ${observed ?? '<none>'} (${lag})\n`;
    if (result.note !== undefined) out += `${visible(result.note)}\n`;
    else if (from === to && explicitFrom === undefined)
      out += 'nothing to diff: the operator has seen the current spec\n';
    else if (result.changes.length === 0) out += `no spec changes from generation ${from} to ${to}\n`;
    else out += `spec changes from generation ${from} to ${to}:\n${renderChanges(result.changes, pal)}`;
    ctx.io.out(out);
  }
  return differ ? ExitCode.Error : ExitCode.Ok;
}
