// What a reconcile off its task's interval may spend (reconcile-budget.ts), when a task is due
// (task-memory.ts), and the deadline that frees a worker (reconcile-deadline.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Deferred, DUE_SLACK_MS, ReconcileBudget } from './reconcile-budget.ts';
import { DeadlineExceeded, ReconcileDeadline } from './reconcile-deadline.ts';
import { TaskMemory } from './task-memory.ts';

test('Spend: a due reconcile is free; off the interval a namespace gets its burst, then its rate', () => {
  let now = 0;
  const budget = new ReconcileBudget(60, 3, () => now);
  const due = budget.spend('a', true);
  for (let i = 0; i < 100; i++) assert.equal(due.may(), true);
  due.must(100);
  const off = budget.spend('a', false);
  assert.deepEqual([off.may(), off.may(), off.may(), off.may()], [true, true, true, false]);
  assert.equal(budget.spend('b', false).may(), true, 'another namespace has its own bucket');
  assert.throws(() => budget.spend('a', false).must(), Deferred, 'nothing to write with');
  now += 1000;
  assert.equal(budget.spend('a', false).may(), true, 'one call a second comes back');
});

test('Spend.must: the first call needs a token now; once committed, later ones are charged ahead', () => {
  let now = 0;
  const budget = new ReconcileBudget(60, 2, () => now);
  const spend = budget.spend('a', false);
  spend.must();
  spend.must(5);
  assert.ok(spend.waitMs() >= 4000, `the namespace owes its calls: ${spend.waitMs()} ms`);
  const next = budget.spend('a', false);
  assert.equal(next.may(), false);
  assert.throws(
    () => next.must(),
    (err: unknown) => err instanceof Deferred && err.waitMs === next.waitMs(),
  );
  now += next.waitMs();
  assert.doesNotThrow(() => budget.spend('a', false).must());
});

test('TaskMemory: never seen is due; an off-interval trigger never pushes the due time back', () => {
  const now = 1_000_000;
  const memory = new TaskMemory(new ReconcileBudget(60, 20, () => now));
  assert.equal(memory.spend('a/t', 'a', now).due, true);
  assert.equal(memory.due('a/t', true, now, 60_000), 60_000);
  assert.equal(memory.spend('a/t', 'a', now + 1_000).due, false);
  assert.equal(memory.due('a/t', false, now + 1_000, 60_000), 59_000, 'the kept due time wins');
  assert.equal(
    memory.due('a/t', false, now + 2_000, 5_000),
    5_000,
    "the operator's own earlier requeue wins",
  );
  assert.equal(memory.spend('a/t', 'a', now + 7_000 - DUE_SLACK_MS).due, true);
  memory.forget('a/t');
  assert.equal(memory.spend('a/t', 'a', now).due, true);
  memory.due('a/t', true, now, 60_000);
  memory.wake('a/t');
  assert.equal(memory.spend('a/t', 'a', now).due, true, 'a freed slot makes a waiting task due');
});

test('TaskMemory.newIgnored: the same ApprovalIgnored note is not repeated, and each new one is paid', () => {
  const memory = new TaskMemory(new ReconcileBudget());
  let paid = 0;
  const pay = (): boolean => (paid++, true);
  assert.equal(memory.newIgnored('a/t', 'x', pay), true);
  assert.equal(memory.newIgnored('a/t', 'x', pay), false);
  assert.equal(paid, 1, 'a repeat costs nothing');
  assert.equal(
    memory.newIgnored('a/t', 'y', () => false),
    false,
  );
  assert.equal(memory.newIgnored('a/t', 'y', pay), true, 'one refused for want of a token is not remembered');
});

test('TaskMemory.overran: the namespace pays a call a second held, and the retry is off-interval', () => {
  let now = 0;
  const budget = new ReconcileBudget(60, 20, () => now);
  const memory = new TaskMemory(budget);
  memory.due('a/t', true, now, 60_000);
  now = 60_000;
  memory.overran('a/t', now, 10_000);
  const retry = memory.spend('a/t', 'a', now + 5);
  assert.equal(retry.due, false);
  assert.equal(retry.may(), true, '20 - 10 tokens left');
  memory.overran('a/t', now, 10_000);
  assert.equal(memory.spend('a/t', 'a', now).may(), false, 'two overruns spent the burst');
});

test('ReconcileDeadline: past it before commit the run rejects DeadlineExceeded, aborts, and refuses writes', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const deadline = new ReconcileDeadline(10_000);
  const run = deadline.run(new Promise<string>(() => undefined));
  const outcome = run.then(
    () => 'finished',
    (err: unknown) => (err instanceof DeadlineExceeded ? 'cut' : 'other'),
  );
  t.mock.timers.tick(10_000);
  assert.equal(await outcome, 'cut');
  assert.equal(deadline.signal.aborted, true);
  assert.throws(() => deadline.check(), DeadlineExceeded);
  assert.throws(() => deadline.commit(), DeadlineExceeded);
});

test('ReconcileDeadline: once committed the run is not cut', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const deadline = new ReconcileDeadline(10_000);
  let finish: (v: string) => void = () => undefined;
  const run = deadline.run(new Promise<string>((resolve) => (finish = resolve)));
  deadline.commit();
  t.mock.timers.tick(20_000);
  assert.equal(deadline.signal.aborted, false);
  finish('acted');
  assert.equal(await run, 'acted');
});

test('ReconcileDeadline.extend: an LLM call moves the deadline out by its own bound', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const deadline = new ReconcileDeadline(10_000);
  const outcome = deadline.run(new Promise<string>(() => undefined)).catch((err: unknown) => err);
  t.mock.timers.tick(4_000);
  deadline.extend(11_000);
  t.mock.timers.tick(16_999);
  assert.equal(deadline.signal.aborted, false, 'still within 10 s plus the 11 s the call may take');
  t.mock.timers.tick(1);
  assert.ok((await outcome) instanceof DeadlineExceeded);
  assert.equal(deadline.signal.aborted, true);
});
