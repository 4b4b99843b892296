// The inventory of every input path of the operator process (with its hosted conversion
// webhook) and of the standalone webhook: each watched or listed kind and each other apiserver
// read (inventory-reads.ts), each listener (inventory-listeners.ts), each outbound call
// (inventory-outbound.ts), each metric label and each alert's input (inventory-series.ts),
// with its budgets (the shape and shared phrases in inventory-budgets.ts). Whatever reaches the
// process through one of these is treated as hostile: each path states how many bytes, how
// many objects or connections, how much at once, how often, for how long, and who may reach
// it. `npm run generate` renders it into docs/security.md; inventory.test.ts checks it against
// the code (scan.ts finds every site, the registries give every label, alerts.ts every
// alert), so a new path without its budgets fails CI.

import type { InputPath } from './inventory-budgets.ts';
import { LISTENER_PATHS } from './inventory-listeners.ts';
import { OUTBOUND_PATHS } from './inventory-outbound.ts';
import { READ_PATHS } from './inventory-reads.ts';

/** Every input path. Order: reads from the apiserver, listeners, outbound calls. */
export const INPUT_PATHS: readonly InputPath[] = [...READ_PATHS, ...LISTENER_PATHS, ...OUTBOUND_PATHS];
