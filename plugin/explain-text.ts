// Text forms of `kubectl aiops explain-phase`: the full account of one AITask, and one
// line per AITask for listings (`-o wide` adds generations, since and the cause message).
// Every string of an explanation is shown through `visible`. Pure.

import type { Explanation } from '../api/status/explain.ts';
import { phaseColor } from './describe-text.ts';
import { age, table, visibleDeep, type Palette } from './format.ts';

function statusColor(e: Explanation, pal: Palette): string {
  const s = e.kstatus.status;
  return s === 'Failed' ? pal.red(s) : s === 'Current' ? pal.green(s) : pal.yellow(s);
}

function relative(at: string, now: Date): string {
  const t = Date.parse(at);
  return t >= now.getTime() ? `in ${age(now.toISOString(), new Date(t))}` : `${age(at, now)} ago`;
}

/** The full account of one AITask. */
export function renderExplanation(explanation: Explanation, now: Date, pal: Palette): string {
  const e = visibleDeep(explanation);
  const gen =
    e.observedGeneration === undefined
      ? `generation ${e.generation}, not observed by the operator yet`
      : `generation ${e.generation}, observed ${e.observedGeneration}`;
  const since = e.since !== undefined ? `, last transition ${age(e.since, now)} ago` : '';
  const lines = [
    `${pal.bold(`aitask "${e.name}"`)} in namespace "${e.namespace}" is ${phaseColor(e.phase, pal)} (${statusColor(e, pal)}: ${e.kstatus.reason}; ${gen}${since}).`,
    '',
    'Why:',
    ...e.causes.map(
      (c) => `  - ${c.reason}${c.condition ? ` (condition ${c.condition})` : ''}: ${c.message}`,
    ),
    '',
    'What happens next:',
    `  ${e.next}${e.nextAt !== undefined ? ` (${relative(e.nextAt, now)})` : ''}`,
  ];
  if (e.remedies.length) lines.push('', 'What you can do:', ...e.remedies.map((r) => `  - ${r}`));
  return `${lines.join('\n')}\n`;
}

/** One row per AITask; `withNamespace` for -A, `wide` for the extra columns. */
export function renderExplanationList(
  list: readonly Explanation[],
  now: Date,
  pal: Palette,
  withNamespace: boolean,
  wide: boolean,
): string {
  const head = [
    ...(withNamespace ? ['Namespace'] : []),
    'Name',
    'Phase',
    'Status',
    'Reason',
    ...(wide ? ['Generation', 'Observed', 'Since', 'Message'] : []),
    'Next',
  ];
  const rows = visibleDeep(list).map((e) => {
    const cause = e.causes[0];
    return [
      ...(withNamespace ? [e.namespace] : []),
      e.name,
      phaseColor(e.phase, pal),
      statusColor(e, pal),
      cause?.reason ?? e.kstatus.reason,
      ...(wide
        ? [
            String(e.generation),
            String(e.observedGeneration ?? '<none>'),
            e.since ? age(e.since, now) : '<none>',
            cause?.message ?? '',
          ]
        : []),
      e.next,
    ];
  });
  return table(head, rows);
}
