// Fenced blocks of the docs as a reader copies them, so a test can run or apply exactly what a
// page shows and the page cannot drift from what works.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../olm/validators.ts';

/**
 * The text of the first ```` ```lang ```` block of `page` (repo path) after the heading line
 * `heading` and before the next heading of the same level that contains `containing`. Throws
 * naming the page and heading when there is none.
 */
export function docBlock(page: string, heading: string, lang: string, containing = ''): string {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  const level = /^#+ /.exec(heading)?.[0] ?? '## ';
  const end = at < 0 ? -1 : text.indexOf(`\n${level}`, at + heading.length + 1);
  const section = at < 0 ? '' : text.slice(at, end < 0 ? undefined : end);
  const block = [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))]
    .map((m) => m[1] ?? '')
    .find((b) => b.includes(containing));
  if (block === undefined)
    throw new Error(
      `${page} has no ${lang} block${containing ? ` with "${containing}"` : ''} under "${heading}"`,
    );
  return block;
}
