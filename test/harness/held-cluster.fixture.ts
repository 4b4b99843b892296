// A test file that never ends on its own, for harness/interrupted-run.ts: it starts a cluster
// (apiserver, etcd, controllers, kwok; the real node instead of kwok with
// AIOPS_HELD_REAL_NODE=1) as a test file's before-hook would, says so by writing its pid to
// the file AIOPS_HELD_READY, and waits to be interrupted. Not a *.test.ts, so `npm test` runs
// it only when named.
import { writeFileSync } from 'node:fs';
import { startCluster } from './cluster.ts';

const ready = process.env['AIOPS_HELD_READY'];
if (ready === undefined) throw new Error('AIOPS_HELD_READY is not set');
await startCluster(process.env['AIOPS_HELD_REAL_NODE'] === '1' ? { realNode: true, nodes: 0 } : {});
writeFileSync(ready, `${process.pid}\n`);
await new Promise(() => setInterval(() => undefined, 60_000));
