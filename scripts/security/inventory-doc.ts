// The input-path inventory as docs/security.md shows it: three Markdown tables (paths with
// the fan-out of their cache handlers, labels, alerts) rendered from inventory.ts and
// inventory-fanout.ts. `npm run generate` writes them between
// INVENTORY_MARKERS; inventory.test.ts checks the page holds what this renders.

import { INPUT_PATHS } from './inventory.ts';
import { fanOutOf } from './inventory-fanout.ts';
import { ALERT_INPUTS, LABELS } from './inventory-series.ts';

/** The comments the tables sit between in docs/security.md. */
export const INVENTORY_MARKERS = {
  begin: '<!-- input-paths:begin (npm run generate writes this from scripts/security/inventory.ts) -->',
  end: '<!-- input-paths:end -->',
} as const;

/** `text` made safe for a Markdown table cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll(/\s+/g, ' ').trim();
}

const files = (paths: readonly string[]): string => paths.map((p) => `\`${p}\``).join(', ');

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The three tables, with a line of text before each, ending with a newline. */
export function inventoryMarkdown(): string {
  const paths = table(
    [
      'path',
      'what',
      'bytes',
      'count',
      'at once',
      'rate',
      'time',
      'who reaches it',
      'fan-out',
      'enforced in',
      'proved by',
    ],
    INPUT_PATHS.map((p) => [
      `**${p.id}** (${p.class})`,
      p.what,
      p.budgets.bytes,
      p.budgets.count,
      p.budgets.concurrency,
      p.budgets.rate,
      p.budgets.time,
      p.budgets.reach,
      fanOutOf(p.id),
      files(p.enforcedIn),
      files(p.provedBy),
    ]),
  );
  const labels = table(
    ['label', 'series', 'values', 'enforced in', 'proved by'],
    LABELS.map((l) => [
      `\`${l.label}\``,
      l.series.map((s) => `\`${s}\``).join(', '),
      l.values,
      files(l.enforcedIn),
      files(l.provedBy),
    ]),
  );
  const alerts = table(
    ['alert', 'what moves it', 'proved by'],
    ALERT_INPUTS.map((a) => [`\`${a.alert}\``, a.movedBy, files(a.provedBy)]),
  );
  return [
    'Every path by which input reaches the operator process (and the standalone webhook); its fan-out is, for each handler its changes call, the work-queue keys it may queue and whose pace they take:',
    '',
    paths,
    '',
    'Every label of every series, and where its values come from:',
    '',
    labels,
    '',
    'Every shipped alert, and what can move it:',
    '',
    alerts,
    '',
  ].join('\n');
}

/** `doc` with the text between INVENTORY_MARKERS replaced by `body`; throws if the markers are missing. */
export function withInventory(doc: string, body: string): string {
  const begin = doc.indexOf(INVENTORY_MARKERS.begin);
  const end = doc.indexOf(INVENTORY_MARKERS.end);
  if (begin < 0 || end < begin) throw new Error('docs/security.md lacks the input-paths markers');
  return `${doc.slice(0, begin + INVENTORY_MARKERS.begin.length)}\n\n${body}\n${doc.slice(end)}`;
}

/** The text between INVENTORY_MARKERS in `doc` ('' without them). */
export function readInventory(doc: string): string {
  const begin = doc.indexOf(INVENTORY_MARKERS.begin);
  const end = doc.indexOf(INVENTORY_MARKERS.end);
  return begin < 0 || end < begin ? '' : doc.slice(begin + INVENTORY_MARKERS.begin.length, end).trim();
}
