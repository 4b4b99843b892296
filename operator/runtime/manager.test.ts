// The manager's orders without a cluster: parts start after the parts they name and stop
// after the parts they name (the others at once, side by side), see the stop reason, are
// not started once the manager stops, and the first failure is reported; inconsistent
// orders are refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkOrders, Manager, type Runnable, type StopReason } from './manager.ts';

/** A part that records its start, readiness and stop in `log`; `hold` delays its stop until released. */
function part(
  log: string[],
  name: string,
  orders: Pick<Runnable, 'startAfter' | 'stopAfter'> = {},
  hold?: Promise<void>,
): Runnable {
  return {
    name,
    ...orders,
    async run(signal, ready) {
      log.push(`start ${name}`);
      await Promise.resolve();
      ready();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      log.push(`stopping ${name}`);
      await hold;
      log.push(`stopped ${name}`);
    },
  };
}

/** Lets every pending promise turn and immediate run (the parts here wait on nothing else). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}

test("the operator's order: servers, caches, leader election, controller, sweep; stopped in reverse layers", async () => {
  const log: string[] = [];
  const m = new Manager()
    .add(part(log, 'mark-sweep', { startAfter: ['controller'] }))
    .add(part(log, 'controller', { startAfter: ['leader-election', 'caches'] }))
    .add(part(log, 'leader-election', { startAfter: ['caches'], stopAfter: ['controller', 'mark-sweep'] }))
    .add(part(log, 'caches', { startAfter: ['servers'], stopAfter: ['leader-election'] }))
    .add(part(log, 'servers', { stopAfter: ['leader-election'] }));
  m.start();
  await settle();
  assert.deepEqual(log, [
    'start servers',
    'start caches',
    'start leader-election',
    'start controller',
    'start mark-sweep',
  ]);
  log.length = 0;
  await m.stop();
  assert.deepEqual(log.slice(0, 4).sort(), [
    'stopped controller',
    'stopped mark-sweep',
    'stopping controller',
    'stopping mark-sweep',
  ]);
  assert.deepEqual(log.slice(4, 6), ['stopping leader-election', 'stopped leader-election']);
  assert.deepEqual(log.slice(6).sort(), [
    'stopped caches',
    'stopped servers',
    'stopping caches',
    'stopping servers',
  ]);
});

test('a part that waits on nothing stops at once, beside the others, and sees the stop reason', async () => {
  const log: string[] = [];
  let release = (): void => undefined;
  const held = new Promise<void>((r) => (release = r));
  let reason: unknown;
  const m = new Manager()
    .add(part(log, 'controller', {}, held))
    .add(part(log, 'leader-election', { stopAfter: ['controller'] }))
    .add({
      name: 'webhook',
      async run(signal, ready) {
        ready();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        reason = signal.reason;
        log.push('stopped webhook');
      },
    });
  m.start();
  await settle();
  log.length = 0;
  const stopping = m.stop({ drainMs: 5000 });
  assert.equal(m.stopping, true);
  await settle();
  assert.deepEqual(
    log.sort(),
    ['stopped webhook', 'stopping controller'],
    'the leader waits for the controller',
  );
  assert.deepEqual(reason, { drainMs: 5000 } satisfies StopReason);
  release();
  await stopping;
  assert.ok(log.includes('stopped leader-election'));
  assert.equal(m.stop(), stopping, 'stop is idempotent');
});

test('a part waiting to start when the manager stops never starts; the first failure is reported', async () => {
  const log: string[] = [];
  const m = new Manager()
    .add({
      name: 'leader-election',
      run: () => Promise.reject(new Error('lost the Lease')),
    })
    .add(part(log, 'controller', { startAfter: ['leader-election'] }));
  m.start();
  const failure = await m.failed;
  assert.equal(failure.name, 'leader-election');
  assert.equal(failure.error.message, 'lost the Lease');
  await m.stop();
  assert.deepEqual(log, []);
});

test('a part that fails while stopping goes to onStopError, not to failed', async () => {
  const errors: string[] = [];
  const m = new Manager((name, err) => errors.push(`${name}: ${err.message}`)).add({
    name: 'servers',
    async run(signal, ready) {
      ready();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      throw new Error('close failed');
    },
  });
  m.start();
  await m.stop();
  assert.deepEqual(errors, ['servers: close failed']);
});

test('orders naming an unknown part, a duplicate name or a cycle are refused', () => {
  const r = (name: string, o: Pick<Runnable, 'startAfter' | 'stopAfter'> = {}): Runnable => ({
    name,
    ...o,
    run: () => Promise.resolve(),
  });
  assert.throws(
    () => checkOrders([r('a', { stopAfter: ['b'] })]),
    /a is ordered after b, which is not added/,
  );
  assert.throws(() => checkOrders([r('a'), r('a')]), /two runnables are named a/);
  assert.throws(
    () => checkOrders([r('a', { stopAfter: ['b'] }), r('b', { stopAfter: ['a'] })]),
    /stopAfter has a cycle: a → b → a/,
  );
  assert.throws(() => checkOrders([r('a', { startAfter: ['a'] })]), /startAfter has a cycle/);
  assert.doesNotThrow(() => checkOrders([r('a', { startAfter: ['b'], stopAfter: ['b'] }), r('b')]));
  assert.throws(() => new Manager().add(r('a', { startAfter: ['x'] })).start(), /not added/);
});
