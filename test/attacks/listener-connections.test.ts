// Attack: connections held open on every port the operator serves, from one address of the
// attacker's own (127.0.0.2; all of 127/8 is loopback). Thousands of TLS handshakes begun with
// five bytes and never continued to the HTTPS metrics port, thousands of silent connections to
// the probe port and to the hosted conversion webhook, each reconnected a moment after the
// operator closes it. The operator, run under the shipped memory limit and RBAC, keeps its
// resident memory under that limit (read from /proc/<pid>/status all along), answers /readyz
// from another address, serves the metrics scraper, converts alice's AITask through the
// webhook and reconciles her task: one address holds only its share of each port's
// connections, and each one it holds ends at its deadline.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import { test } from 'node:test';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../../scripts/olm/deployment.ts';
import { httpsCall } from '../support/https-call.ts';
import { eventually } from '../support/operator.ts';
import { useStage } from './use-stage.ts';

const ATTACKER = '127.0.0.2';

const { stage, undisturbed } = useStage();

/** The operator's resident memory now, in MiB, as the kernel counts it against the container's limit. */
function rssMiB(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  assert.ok(kib !== undefined, `VmRSS of ${pid}`);
  return Number(kib) / 1024;
}

/** The health port the operator logged at start. */
function healthPort(): number {
  const port = stage.operator.logs.find((l) => l['msg'] === 'serving endpoints')?.['healthPort'];
  assert.equal(typeof port, 'number', 'the operator logs its health port');
  return port as number;
}

/** A flood of connections held from the attacker's address. */
interface Flood {
  /** The fewest times any one of its connections has been closed by the operator so far. */
  readonly leastEnded: () => number;
  stop(): void;
}

/**
 * Keeps `count` connections from ATTACKER to `port`, each writing `bytes` once connected (or
 * nothing) and then waiting; a connection the operator closes is opened again a second later.
 */
function flood(port: number, count: number, bytes?: Buffer): Flood {
  const ended = new Array<number>(count).fill(0);
  const sockets = new Set<net.Socket>();
  let stopped = false;
  const open = (slot: number): void => {
    if (stopped) return;
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: ATTACKER });
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    if (bytes !== undefined) socket.on('connect', () => socket.write(bytes));
    socket.on('close', () => {
      sockets.delete(socket);
      ended[slot] = (ended[slot] ?? 0) + 1;
      setTimeout(() => open(slot), 1000);
    });
  };
  for (let slot = 0; slot < count; slot++) open(slot);
  return {
    leastEnded: () => Math.min(...ended),
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** The first five bytes of a TLS ClientHello record: a handshake begun and never continued. */
const HALF_HANDSHAKE = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);

test('thousands of held connections from one address on every port: memory under the limit, probes, scraper, conversions and reconciles served', async (t) => {
  const pid = stage.operator.child.pid;
  assert.ok(pid !== undefined, 'the operator runs');
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100);
  const floods = [
    flood(stage.operator.metricsPort, 2000, HALF_HANDSHAKE),
    flood(healthPort(), 1000),
    flood(stage.webhook.port, 1000),
  ];
  let rounds = 0;
  const failures: string[] = [];
  /** One round of honest work from 127.0.0.1; a failure is kept, to fail the test. */
  const honest = async (): Promise<void> => {
    const ready = await fetch(`http://127.0.0.1:${healthPort()}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const scraped = await httpsCall(stage.operator.metricsPort, '/metrics', {
      ca: stage.scraper.ca,
      headers: { Authorization: `Bearer ${stage.scraper.token}` },
    });
    assert.equal(scraped.status, 200, scraped.text);
    assert.match(scraped.text, /^# TYPE controller_runtime_reconcile_total counter$/m);
    const converted = await stage.alice.tasksV1.get(stage.alice.namespace, 'watch');
    assert.equal(converted.apiVersion, 'aiops.example.com/v1');
  };
  try {
    // Every connection of every flood closed at least twice: the beyond-share ones at once, and
    // the ones the operator held, at their deadline; honest work is served all the while. The
    // wait ends early when memory passes the limit, which fails below.
    const outcome = await eventually(
      'every attacker connection closed twice by the operator',
      async () => {
        await honest().catch((err: unknown) => failures.push(`round ${rounds}: ${(err as Error).message}`));
        rounds++;
        if (peak >= OPERATOR_MEMORY_LIMIT_MIB) return 'over the limit';
        return floods.every((f) => f.leastEnded() >= 2) ? 'done' : undefined;
      },
      180_000,
      500,
    );
    if (outcome === 'done') await undisturbed();
  } finally {
    for (const f of floods) f.stop();
    clearInterval(sampler);
  }
  t.diagnostic(
    `resident memory ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB; ${rounds} honest rounds`,
  );
  assert.ok(
    peak < OPERATOR_MEMORY_LIMIT_MIB,
    `resident memory peaked at ${peak.toFixed(0)} MiB (from ${before.toFixed(0)} MiB), the limit is ${OPERATOR_MEMORY_LIMIT_MIB} MiB`,
  );
  assert.deepEqual(failures, [], `honest work failed in ${failures.length} of ${rounds} rounds`);
});
