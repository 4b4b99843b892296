// Shell completion through kubectl (>= 1.26): `kubectl aiops completion` prints the
// kubectl_complete-aiops helper, and the hidden `__complete` command answers it in cobra's
// protocol (one candidate per line, `value<TAB>description`, then `:<directive>`).

import type { Command, Option } from 'commander';
import { COLOR_MODES, connectionOverrides, OUTPUT_FORMATS, type GlobalOptions } from '../flags.ts';
import { ExitCode } from '../errors.ts';
import type { CommandContext } from '../context.ts';

/** Cobra's ShellCompDirective values used here. */
const Directive = { Default: 0, NoFileComp: 4 } as const;

/** The executable kubectl looks up as `kubectl_complete-aiops`. */
export const COMPLETION_SCRIPT = `#!/bin/sh
# Completion helper for \`kubectl aiops\`: kubectl (>= 1.26) runs this for \`kubectl aiops <TAB>\`.
exec kubectl aiops __complete "$@"
`;

/** Runs `completion`. */
export function completion(ctx: CommandContext): Promise<number> {
  ctx.io.out(COMPLETION_SCRIPT);
  return Promise.resolve(ExitCode.Ok);
}

const VALUE_CHOICES: Readonly<Record<string, readonly string[]>> = {
  '--output': OUTPUT_FORMATS,
  '--color': COLOR_MODES,
};

function findOption(cmds: readonly Command[], word: string): Option | undefined {
  const flag = word.split('=')[0] ?? word;
  return cmds.flatMap((c) => c.options).find((o) => o.long === flag || o.short === flag);
}

function scan(program: Command, words: readonly string[]) {
  let sub: Command | undefined;
  const positionals: string[] = [];
  const flags: Record<string, string[]> = {};
  const set = (o: Option, value: string): void => {
    (flags[o.attributeName()] ??= []).push(value);
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    const cmds = sub ? [sub, program] : [program];
    if (w.startsWith('-')) {
      const o = findOption(cmds, w);
      if (o?.required && !w.includes('=')) set(o, words[++i] ?? '');
      else if (o?.required) set(o, w.slice(w.indexOf('=') + 1));
      else if (o !== undefined && !o.optional) set(o, 'true');
    } else if (sub === undefined) sub = program.commands.find((c) => c.name() === w);
    else positionals.push(w);
  }
  return { sub, positionals, flags };
}

/** The connection flags typed so far, so completion asks the cluster the command would. */
function connection(flags: Record<string, string[]>): GlobalOptions {
  const g: GlobalOptions = { output: 'table', requestTimeout: '5s', color: 'never' };
  const last = (k: string): string | undefined => flags[k]?.at(-1) || undefined;
  for (const k of [
    'kubeconfig',
    'context',
    'namespace',
    'server',
    'cluster',
    'user',
    'token',
    'certificateAuthority',
    'tlsServerName',
    'clientCertificate',
    'clientKey',
    'as',
    'asUid',
  ] as const) {
    const v = last(k);
    if (v !== undefined) g[k] = v;
  }
  if (flags['insecureSkipTlsVerify']) g.insecureSkipTlsVerify = true;
  if (flags['asGroup']) g.asGroup = flags['asGroup'];
  return g;
}

async function names(flags: Record<string, string[]>, what: 'aitasks' | 'namespaces'): Promise<string[]> {
  const { openSession } = await import('../session.ts');
  const g = connection(flags);
  const s = await openSession(g, 5000, connectionOverrides(g));
  const list =
    what === 'aitasks'
      ? await s.tasks.list(s.namespace, { limit: 500 })
      : await s.transport.request<{ items: { metadata: { name?: string } }[] }>({
          path: '/api/v1/namespaces',
        });
  return list.items.map((i) => i.metadata.name ?? '').filter((n) => n !== '');
}

/** Candidates for `words` (the words after `kubectl aiops`, the last one being completed). */
export async function complete(program: Command, words: readonly string[]): Promise<string> {
  const toComplete = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const { sub, positionals, flags } = scan(program, before);
  const cmds = sub ? [sub, program] : [program];
  const answer = (items: readonly string[], directive: number = Directive.NoFileComp): string =>
    [...items.filter((i) => i.startsWith(toComplete)), `:${directive}`].join('\n') + '\n';
  const prev = before.at(-1) ?? '';
  const prevOption = prev.startsWith('-') && !prev.includes('=') ? findOption(cmds, prev) : undefined;
  try {
    if (prevOption?.required) {
      const long = prevOption.long ?? '';
      if (
        [
          '--kubeconfig',
          '--certificate-authority',
          '--client-certificate',
          '--client-key',
          '--filename',
        ].includes(long)
      )
        return `:${Directive.Default}\n`;
      if (long === '--namespace' || long === '--lease-namespace')
        return answer(await names(flags, 'namespaces'));
      return answer(VALUE_CHOICES[long] ?? []);
    }
    if (toComplete.startsWith('-'))
      return answer(
        cmds.flatMap((c) =>
          c.options.filter((o) => !o.hidden).map((o) => `${o.long ?? o.short ?? ''}\t${o.description}`),
        ),
      );
    if (sub === undefined)
      return answer(
        program.commands
          .filter((c) => !c.name().startsWith('_'))
          .map((c) => `${c.name()}\t${c.description()}`),
      );
    const takesName = ['describe', 'explain-phase', 'force-finalize', 'generation-diff', 'simulate'].includes(
      sub.name(),
    );
    if (takesName && positionals.length === 0) return answer(await names(flags, 'aitasks'));
    return answer([]);
  } catch {
    return answer([]);
  }
}
