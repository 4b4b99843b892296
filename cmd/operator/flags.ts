// The operator process' command line: the operator's table and the hosted webhook's, both
// under the operator's AIOPS_ variables; and docs/operator.md's flag table, which
// `npm run generate` writes from them between its markers.

import { flagsMarkdown, optionsTable, withTable } from '../../lib/options-table.ts';
import { HOSTED_WEBHOOK_FLAGS } from '../../conversion-webhook/hosted/flags.ts';
import { aiopsEnv, OPERATOR_TABLE } from '../../operator/command.ts';

/** The hosted webhook's flags as the operator process takes them. */
export const HOSTED_TABLE = optionsTable(HOSTED_WEBHOOK_FLAGS, aiopsEnv);

/** The markers around the flag table in docs/operator.md. */
export const FLAGS_TABLE_MARKERS = {
  begin:
    '<!-- flags-table:begin (npm run generate writes this table from the flag tables in operator/ and conversion-webhook/hosted/) -->',
  end: '<!-- flags-table:end -->',
} as const;

/** Every flag of the operator process as docs/operator.md's table (Markdown, unaligned). */
export function operatorFlagsMarkdown(): string {
  return flagsMarkdown([...OPERATOR_TABLE.rows(), ...HOSTED_TABLE.rows()]);
}

/** `doc` with its flag table replaced by `table`. */
export function withFlagsTable(doc: string, table: string): string {
  return withTable(doc, table, FLAGS_TABLE_MARKERS.begin, FLAGS_TABLE_MARKERS.end);
}
