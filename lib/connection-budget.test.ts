// The connection budget: its bookkeeping by table and property (no address over its share,
// never more than the total, a smaller holder always served while a bigger one can give way),
// then real HTTP and HTTPS servers on loopback where the attacker connects from 127.0.0.2 and
// the honest client from 127.0.0.1: half-open handshakes, trickled handshakes, silent and
// unanswered connections are closed by their deadlines, the attacker holds no more than its
// share, and the honest client is served all along. Asserted on the listener's own counts and
// on the sockets' ends, never on timing.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { createServingCert } from '../scripts/lib/certs.ts';
import { eventually } from '../test/harness/wait.ts';
import {
  budgetConnections,
  ConnectionShares,
  listenerOptions,
  type BudgetedListener,
  type ConnectionBudget,
  type ConnectionRefusal,
} from './connection-budget.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-connection-budget-'));
const cert = createServingCert(join(dir, 'certs'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ATTACKER = '127.0.0.2';
const HONEST = '127.0.0.1';

test('each address up to its share, freed on close; a refused or repeated close changes nothing', () => {
  const s = new ConnectionShares<number>({ maxConnectionsPerAddress: 2, maxConnections: 10 });
  assert.deepEqual(s.open('a', 1), { admitted: true, displaced: undefined });
  assert.deepEqual(s.open('a', 2), { admitted: true, displaced: undefined });
  assert.deepEqual(s.open('a', 3), { admitted: false, why: 'address' });
  assert.deepEqual(
    s.open('b', 4),
    { admitted: true, displaced: undefined },
    'another address has its own share',
  );
  s.close('a', 3);
  s.close('a', 1);
  s.close('a', 1);
  assert.equal(s.countOf('a'), 1);
  assert.equal(s.count, 2);
  assert.deepEqual(s.open('a', 5), { admitted: true, displaced: undefined });
});

test('with the total full, a smaller holder displaces the oldest of the biggest; equals are refused', () => {
  const s = new ConnectionShares<string>({ maxConnectionsPerAddress: 4, maxConnections: 6 });
  for (const c of ['a1', 'a2', 'a3', 'a4']) s.open('a', c);
  s.open('b', 'b1');
  s.open('b', 'b2');
  assert.deepEqual(s.open('c', 'c1'), { admitted: true, displaced: 'a1' });
  assert.deepEqual(s.open('c', 'c2'), { admitted: true, displaced: 'a2' });
  assert.equal(s.countOf('a'), 2);
  assert.deepEqual(s.open('c', 'c3'), { admitted: false, why: 'full' }, 'nobody holds two more than c would');
  assert.deepEqual(s.open('d', 'd1'), { admitted: true, displaced: 'a3' });
  assert.equal(s.count, 6);
});

test('property: within both caps; a newcomer is refused only at its share or when nobody holds two more', () => {
  const op = fc.oneof(
    fc.record({ open: fc.constantFrom('a', 'b', 'c', 'd') }),
    fc.record({ close: fc.nat(40) }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 12 }),
      fc.array(op),
      (per, total, ops) => {
        const s = new ConnectionShares<number>({ maxConnectionsPerAddress: per, maxConnections: total });
        const cap = Math.max(per, total);
        const open: [string, number][] = [];
        let next = 0;
        for (const o of ops) {
          if ('close' in o) {
            const [held] = open.splice(o.close % Math.max(1, open.length), 1);
            if (held !== undefined) s.close(...held);
            continue;
          }
          const mine = s.countOf(o.open);
          const most = Math.max(
            0,
            ...['a', 'b', 'c', 'd'].filter((x) => x !== o.open).map((x) => s.countOf(x)),
          );
          const r = s.open(o.open, next);
          if (mine >= per) assert.deepEqual(r, { admitted: false, why: 'address' });
          else if (s.count > cap || (!r.admitted && (r.why !== 'full' || most >= mine + 2)))
            assert.fail(`refused wrongly: ${JSON.stringify({ r, mine, most })}`);
          if (r.admitted) {
            open.push([o.open, next]);
            if (r.displaced !== undefined)
              open.splice(
                open.findIndex(([, c]) => c === r.displaced),
                1,
              );
          }
          next++;
          assert.ok(s.count <= cap);
          assert.equal(s.count, open.length);
          for (const x of ['a', 'b', 'c', 'd']) assert.ok(s.countOf(x) <= per);
        }
      },
    ),
  );
});

/** A budget small enough for a test: deadlines of a fraction of a second, 3 per address, 8 in all. */
const SMALL: ConnectionBudget = {
  handshakeTimeoutMs: 500,
  headersTimeoutMs: 500,
  requestTimeoutMs: 1_000,
  keepAliveTimeoutMs: 500,
  idleTimeoutMs: 1_000,
  maxConnectionsPerAddress: 3,
  maxConnections: 8,
};

interface Running {
  readonly port: number;
  readonly budget: BudgetedListener;
  readonly closed: Map<ConnectionRefusal, number>;
  stop(): Promise<void>;
}

/** Starts an HTTP (or HTTPS) server under `budget` on loopback; `/hang` is never answered, anything else is 200. */
async function serve(secure: boolean, budget: ConnectionBudget = SMALL): Promise<Running> {
  const handler: http.RequestListener = (req, res) => {
    if (req.url !== '/hang') res.end('ok\n');
  };
  const server = secure
    ? https.createServer(
        { ...listenerOptions(budget), cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) },
        handler,
      )
    : http.createServer(listenerOptions(budget), handler);
  const closed = new Map<ConnectionRefusal, number>();
  const counts = budgetConnections(server, budget, (why) => closed.set(why, (closed.get(why) ?? 0) + 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    budget: counts,
    closed,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A raw TCP connection from `from` that writes `bytes` once connected; `ended` resolves when the server closes it. */
function hold(
  port: number,
  from: string,
  bytes?: Buffer | string,
): { socket: net.Socket; ended: Promise<void> } {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  if (bytes !== undefined) socket.on('connect', () => socket.write(bytes));
  return { socket, ended: new Promise((resolve) => socket.once('close', () => resolve())) };
}

/** GET `path` from the honest address, over HTTPS trusting the test CA when `secure`; resolves with the status. */
function get(port: number, secure: boolean, path = '/'): Promise<number> {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port, path, localAddress: HONEST, agent: false };
    const done = (res: http.IncomingMessage): void => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    };
    const req = secure
      ? https.get({ ...opts, ca: cert.caPem, servername: 'localhost' }, done)
      : http.get(opts, done);
    req.on('error', reject);
  });
}

/** The first five bytes of a TLS ClientHello record: a handshake begun and never continued. */
const HALF_HANDSHAKE = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);

test('HTTPS: 200 half-open handshakes from one address hold its share only, end at the deadline; the honest client is served', async () => {
  const s = await serve(true);
  try {
    const held = Array.from({ length: 200 }, () => hold(s.port, ATTACKER, HALF_HANDSHAKE));
    await eventually('the attacker at its share', () => (s.closed.get('address') ?? 0) >= 197 || undefined);
    assert.equal(s.budget.countOf(ATTACKER), SMALL.maxConnectionsPerAddress);
    assert.equal(await get(s.port, true), 200);
    await Promise.all(held.map((h) => h.ended));
    await eventually('every attacker connection uncounted', () => s.budget.count === 0 || undefined);
  } finally {
    await s.stop();
  }
});

test('HTTPS: a handshake trickled a byte at a time ends at the deadline, however lively', async () => {
  const s = await serve(true);
  try {
    const { socket, ended } = hold(s.port, ATTACKER);
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < HALF_HANDSHAKE.length + 512) socket.write(Buffer.from([HALF_HANDSHAKE[sent] ?? 0]));
      sent++;
    }, 50);
    await ended;
    clearInterval(trickle);
    assert.ok(sent < HALF_HANDSHAKE.length + 512, `closed while still trickling (${sent} bytes sent)`);
    await eventually('the connection uncounted', () => s.budget.count === 0 || undefined);
  } finally {
    await s.stop();
  }
});

test('HTTP: silent connections beyond the share are closed at once, the rest at the header deadline; the honest client is served', async () => {
  const s = await serve(false);
  try {
    const held = Array.from({ length: 50 }, () => hold(s.port, ATTACKER));
    await eventually('the attacker at its share', () => (s.closed.get('address') ?? 0) >= 47 || undefined);
    assert.equal(await get(s.port, false), 200);
    await Promise.all(held.map((h) => h.ended));
    const slow = hold(s.port, ATTACKER, 'GET / HTTP/1.1\r\nHost: x\r\n');
    await slow.ended;
    await eventually('the attacker uncounted', () => s.budget.countOf(ATTACKER) === 0 || undefined);
  } finally {
    await s.stop();
  }
});

test('HTTP: a request never answered is closed after the idle deadline', async () => {
  const s = await serve(false);
  try {
    const { ended } = hold(s.port, ATTACKER, 'GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    await ended;
    await eventually('the connection uncounted', () => s.budget.count === 0 || undefined);
  } finally {
    await s.stop();
  }
});

test('total full from two addresses: the honest address displaces the biggest holder and is served', async () => {
  for (const secure of [false, true]) {
    const s = await serve(secure, {
      ...SMALL,
      handshakeTimeoutMs: 60_000,
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 60_000,
    });
    try {
      const held = [
        ...Array.from({ length: 3 }, () => hold(s.port, ATTACKER)),
        ...Array.from({ length: 3 }, () => hold(s.port, '127.0.0.3')),
        ...Array.from({ length: 2 }, () => hold(s.port, '127.0.0.4')),
      ];
      await eventually('the total full', () => s.budget.count === SMALL.maxConnections || undefined);
      assert.equal(await get(s.port, secure), 200);
      assert.equal(s.closed.get('displaced'), 1);
      for (const h of held) h.socket.destroy();
      await eventually('all uncounted', () => s.budget.count === 0 || undefined);
    } finally {
      await s.stop();
    }
  }
});

test('a server made without listenerOptions is refused', () => {
  assert.throws(() => budgetConnections(http.createServer(), SMALL), /listenerOptions/);
});
