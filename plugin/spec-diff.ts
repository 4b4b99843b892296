// Field-level differences between two AITask specs, as `generation-diff` reports them:
// one entry per changed leaf (arrays compare whole), with dotted paths like
// `spec.trigger.threshold`. Built on the project's one JSON diff (api/conversion/json-diff.ts).
// Rendered paths and values show control and format characters through `visible`.

import { diff } from '../api/conversion/json-diff.ts';
import { visible, type Palette } from './format.ts';

/** One changed field. `from` is absent for added fields, `to` for removed ones. */
export interface FieldChange {
  path: string;
  op: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

/** The changes that turn spec `from` into spec `to`, sorted by path. */
export function specChanges(from: unknown, to: unknown): FieldChange[] {
  return diff(from, to, ['spec'])
    .map((e): FieldChange => {
      const path = e.p.map((k) => (/^[A-Za-z_][\w-]*$/.test(k) ? k : JSON.stringify(k))).join('.');
      if (e.b === undefined) return { path, op: 'added', to: e.v };
      if (e.v === undefined) return { path, op: 'removed', from: e.b };
      return { path, op: 'changed', from: e.b, to: e.v };
    })
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** A value as JSON, with what JSON leaves raw (C1, format characters, U+2028/9) made visible. */
const show = (v: unknown): string => visible(JSON.stringify(v));

/** `~ path: old → new`, `+ path: new`, `- path: old`, coloured yellow/green/red. */
export function renderChanges(changes: readonly FieldChange[], pal: Palette, indent = '  '): string {
  return changes
    .map((c) => {
      if (c.op === 'added') return pal.green(`${indent}+ ${visible(c.path)}: ${show(c.to)}`);
      if (c.op === 'removed') return pal.red(`${indent}- ${visible(c.path)}: ${show(c.from)}`);
      return pal.yellow(`${indent}~ ${visible(c.path)}: ${show(c.from)} → ${show(c.to)}`);
    })
    .map((l) => `${l}\n`)
    .join('');
}
