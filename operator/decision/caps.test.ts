import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type * as v2 from '../../api/schema/v2.ts';
import { cordonAllowed, crossNamespaceRefusal, mayTarget, RemediationSlots, targetOwner } from './caps.ts';

/** Grants are by UID; in these tests a task's UID is its key with a "uid:" prefix. */
const uid = (key: string): string => `uid:${key}`;

/** A decision written and its action not yet recorded. */
const inFlight: v2.DecisionRecord = {
  id: 'd1',
  action: 'ScaleUp',
  source: 'rules',
  reason: 'threshold breached',
  at: '2026-12-02T00:00:00Z',
};

test('remediation slots: capped, kept while the holder acts or has a decision in flight, freed by the first reconcile that does not act', () => {
  const slots = new RemediationSlots(2, 0);
  assert.deepEqual(slots.holders(), [], 'a fresh process holds nothing, whatever statuses say');
  const full = (holders: string[]) => ({ flag: '--max-concurrent-remediations', cap: 2, holders });
  assert.equal(slots.acquire('ns/a', uid('ns/a')), undefined);
  assert.equal(slots.acquire('ns/old', uid('ns/old')), undefined);
  assert.deepEqual(slots.acquire('ns/b', uid('ns/b')), full(['ns/a', 'ns/old']));
  assert.equal(slots.acquire('ns/a', uid('ns/a')), undefined, 'a holder keeps its slot');
  assert.deepEqual(slots.sync(uid('ns/a'), { phase: 'Healing' }, true), [], 'acted this reconcile: kept');
  assert.deepEqual(
    slots.sync(uid('ns/a'), { phase: 'Healing', pendingDecision: inFlight }, false),
    [],
    'in flight: kept',
  );
  assert.deepEqual(slots.sync(uid('ns/old'), { phase: 'Healing' }, true), []);
  assert.deepEqual(
    slots.sync(uid('ns/old'), { phase: 'Healed' }, false),
    ['ns/b'],
    'recovered: freed, b woken',
  );
  assert.equal(slots.acquire('ns/b', uid('ns/b')), undefined);
  assert.deepEqual(slots.acquire('ns/c', uid('ns/c')), full(['ns/a', 'ns/b']));
  assert.deepEqual(
    slots.sync(uid('ns/a'), { phase: 'Healing' }, false),
    ['ns/c'],
    'did not act (cooldown, at its replica bound, blocked): freed, c woken',
  );
  assert.deepEqual(slots.sync(uid('ns/a'), { phase: 'Healing' }, false), [], 'a status never grants');
  assert.equal(slots.acquire('ns/c', uid('ns/c')), undefined);
  assert.deepEqual(slots.acquire('ns/d', uid('ns/d')), full(['ns/b', 'ns/c']));
  assert.deepEqual(slots.forget('ns/c'), ['ns/d'], 'a deleted holder frees its slot: d woken');
  assert.deepEqual(slots.holders(), ['ns/b']);
  assert.deepEqual(slots.forget('ns/c'), []);
  assert.equal(new RemediationSlots(0, 0).acquire('x', 'u'), undefined, '0 means no cap');
});

test('remediation slots: a grant refused by a later gate ends quietly (wakes no one); one used for an action wakes', () => {
  const slots = new RemediationSlots(1, 0);
  assert.equal(slots.acquire('ns/a', 'ua'), undefined);
  assert.equal(slots.acquire('ns/b', 'ub')?.flag, '--max-concurrent-remediations');
  assert.deepEqual(
    slots.sync('ua', { phase: 'Monitoring' }, false),
    [],
    'refused by the cordon cap: freed quietly',
  );
  assert.deepEqual(slots.holders(), [], 'but freed all the same');
  assert.deepEqual(slots.waiting(), ['ns/b'], 'b still waits');
  assert.equal(slots.acquire('ns/b', 'ub'), undefined);
  assert.deepEqual(slots.waiting(), [], 'granted: b waits no more');
  assert.equal(slots.acquire('ns/c', 'uc')?.flag, '--max-concurrent-remediations');
  assert.deepEqual(slots.sync('ub', { phase: 'Healing' }, true), [], 'acted: kept');
  assert.deepEqual(
    slots.sync('ub', { phase: 'Healing' }, false),
    ['ns/c'],
    'a used grant ends: the waiting tasks are handed out',
  );
  assert.deepEqual(slots.waiting(), [], 'handed out: they wait no more');
  assert.equal(slots.acquire('ns/b', 'ub'), undefined);
  assert.deepEqual(slots.sync('ub', { phase: 'Healing' }, false), [], 'a new grant starts unused');
});

test('remediation slots: a recreated task (same key, new UID) does not inherit the old grant', () => {
  const slots = new RemediationSlots(1, 0);
  assert.equal(slots.acquire('ns/a', 'uid-1'), undefined);
  assert.deepEqual(slots.sync('uid-2', { phase: 'Healing' }, false), []);
  assert.equal(slots.acquire('ns/a', 'uid-2')?.flag, '--max-concurrent-remediations', 'uid-1 still holds it');
  assert.deepEqual(slots.waiting(), ['ns/a']);
  assert.deepEqual(slots.forget('ns/a'), [], 'deleting the key frees the old grant and ends its wait');
  assert.deepEqual(slots.holders(), []);
  assert.equal(slots.acquire('ns/a', 'uid-2'), undefined);
});

test('remediation slots: forged statuses count for nothing; two always-breaching namespaces in cooldown do not hold the pool', () => {
  const slots = new RemediationSlots(10, 5);
  for (let i = 0; i < 10; i++)
    assert.deepEqual(
      slots.sync(uid(`forger/t${i}`), { phase: 'Healing', pendingDecision: inFlight }, false),
      [],
    );
  assert.deepEqual(slots.holders(), [], 'ten forged Healing statuses hold nothing');
  for (const ns of ['a', 'b'])
    for (let i = 0; i < 5; i++) {
      const key = `${ns}/t${i}`;
      assert.equal(slots.acquire(key, uid(key)), undefined);
      assert.deepEqual(
        slots.sync(uid(key), { phase: 'Healing' }, true),
        [],
        'acted: held until the next reconcile',
      );
    }
  assert.equal(slots.acquire('c/t0', uid('c/t0'))?.flag, '--max-concurrent-remediations', 'the pool is full');
  for (const ns of ['a', 'b'])
    for (let i = 0; i < 5; i++) slots.sync(uid(`${ns}/t${i}`), { phase: 'Healing' }, false);
  assert.equal(slots.acquire('c/t0', uid('c/t0')), undefined, 'cooling down, they released the pool');
});

test('remediation slots: the per-namespace share', () => {
  const slots = new RemediationSlots(4, 2);
  const take = (key: string) => slots.acquire(key, uid(key));
  assert.equal(take('a/t0'), undefined);
  assert.equal(take('a/t1'), undefined);
  assert.deepEqual(take('a/t2'), {
    flag: '--max-concurrent-remediations-per-namespace',
    cap: 2,
    namespace: 'a',
    holders: ['a/t0', 'a/t1'],
  });
  assert.equal(take('b/t0'), undefined, 'another namespace is not held back');
  assert.equal(take('b/t1'), undefined);
  assert.equal(take('c/t0')?.flag, '--max-concurrent-remediations', 'the pool is full');
  assert.deepEqual(slots.sync(uid('a/t0'), { phase: 'Healing' }, true), []);
  assert.deepEqual(slots.sync(uid('a/t0'), { phase: 'Healed' }, false), ['a/t2', 'c/t0']);
  assert.equal(take('a/t2'), undefined, 'a freed slot of the namespace is taken again');
  assert.equal(take('a/t1'), undefined, 'a holder keeps its slot');
  assert.equal(new RemediationSlots(0, 1).acquire('x/a', 'u1'), undefined);
  const shareOnly = new RemediationSlots(0, 1);
  shareOnly.acquire('x/a', 'u1');
  assert.equal(shareOnly.acquire('x/b', 'u2')?.flag, '--max-concurrent-remediations-per-namespace');
  assert.equal(shareOnly.acquire('y/b', 'u3'), undefined, 'the share alone, without an overall cap');
});

test('remediation slots (property): holders are grants only, never over the cap nor a namespace over its share; refused only when full', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 3 }),
      fc.array(
        fc.tuple(
          fc.constantFrom('acquire', 'act', 'heal', 'cool', 'forge', 'forget'),
          fc.constantFrom('a', 'b', 'c'),
          fc.integer({ min: 0, max: 9 }),
        ),
        { maxLength: 100 },
      ),
      (cap, perNamespace, ops) => {
        const slots = new RemediationSlots(cap, perNamespace);
        const granted = new Set<string>();
        for (const [op, ns, i] of ops) {
          const key = `${ns}/t${i}`;
          if (op === 'acquire') {
            const before = slots.holders();
            const refused = slots.acquire(key, uid(key));
            if (refused === undefined) granted.add(key);
            else {
              const mine = before.filter((k) => k.startsWith(`${ns}/`)).length;
              assert.ok(
                before.length >= cap || (perNamespace > 0 && mine >= perNamespace),
                'refused only when a cap is full',
              );
            }
          } else if (op === 'heal') {
            slots.sync(uid(key), { phase: 'Healed' }, false);
            granted.delete(key);
          } else if (op === 'act') slots.sync(uid(key), { phase: 'Healing' }, true);
          else if (op === 'cool') {
            slots.sync(uid(key), { phase: 'Healing' }, false);
            granted.delete(key);
          } else if (op === 'forge')
            slots.sync(uid(key), { phase: 'Healing', pendingDecision: inFlight }, false);
          else {
            slots.forget(key);
            granted.delete(key);
          }
          const held = slots.holders();
          assert.deepEqual(held, [...granted].sort(), 'only grants hold slots');
          assert.ok(held.length <= cap);
          if (perNamespace > 0)
            for (const n of ['a', 'b', 'c'])
              assert.ok(held.filter((k) => k.startsWith(`${n}/`)).length <= perNamespace);
        }
      },
    ),
  );
});

test('remediation slots (property): a release hands out exactly the keys refused and not granted since, once', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 0, max: 2 }),
      fc.array(
        fc.tuple(
          fc.constantFrom('acquire', 'act', 'idle', 'forget'),
          fc.constantFrom('a', 'b'),
          fc.integer({ min: 0, max: 4 }),
        ),
        { maxLength: 120 },
      ),
      (cap, perNamespace, ops) => {
        const slots = new RemediationSlots(cap, perNamespace);
        const waiting = new Set<string>();
        const used = new Set<string>();
        for (const [op, ns, i] of ops) {
          const key = `${ns}/t${i}`;
          const held = slots.holders().includes(key);
          let woken: readonly string[] = [];
          if (op === 'acquire') {
            if (slots.acquire(key, uid(key)) === undefined) waiting.delete(key);
            else waiting.add(key);
          } else if (op === 'act') woken = slots.sync(uid(key), { phase: 'Healing' }, true);
          else if (op === 'idle') woken = slots.sync(uid(key), { phase: 'Healing' }, false);
          else woken = slots.forget(key);
          if (op === 'act' && held) used.add(key);
          if (op === 'forget') waiting.delete(key);
          const released = held && (op === 'forget' || (op === 'idle' && used.has(key)));
          if (op === 'forget' || op === 'idle') used.delete(key);
          assert.deepEqual(woken, released ? [...waiting].sort() : [], `${op} ${key}`);
          if (released) waiting.clear();
          assert.deepEqual(slots.waiting(), [...waiting].sort());
        }
      },
    ),
  );
});

test('remediation slots: who a release wakes, table', () => {
  type Step = readonly [op: 'acquire' | 'act' | 'idle' | 'forget', key: string, woken?: readonly string[]];
  const cases: readonly { name: string; cap: number; perNamespace: number; steps: readonly Step[] }[] = [
    {
      name: 'the cluster-wide cap: every refused key, in any namespace',
      cap: 1,
      perNamespace: 0,
      steps: [
        ['acquire', 'a/x'],
        ['acquire', 'b/y'],
        ['acquire', 'a/z'],
        ['act', 'a/x'],
        ['idle', 'a/x', ['a/z', 'b/y']],
      ],
    },
    {
      name: 'a refused key granted later waits no more',
      cap: 1,
      perNamespace: 0,
      steps: [
        ['acquire', 'a/x'],
        ['acquire', 'a/y'],
        ['forget', 'a/x', ['a/y']],
        ['acquire', 'a/y'],
        ['act', 'a/y'],
        ['idle', 'a/y', []],
      ],
    },
    {
      name: 'an unused grant ends quietly; the waiters stay for the next release',
      cap: 1,
      perNamespace: 0,
      steps: [
        ['acquire', 'a/x'],
        ['acquire', 'a/y'],
        ['idle', 'a/x', []],
        ['acquire', 'a/z'],
        ['act', 'a/z'],
        ['idle', 'a/z', ['a/y']],
      ],
    },
    {
      name: 'a deleted waiter is not handed out',
      cap: 1,
      perNamespace: 0,
      steps: [
        ['acquire', 'a/x'],
        ['acquire', 'a/y'],
        ['forget', 'a/y', []],
        ['act', 'a/x'],
        ['idle', 'a/x', []],
      ],
    },
    {
      name: 'the per-namespace share: the refused neighbour is woken',
      cap: 0,
      perNamespace: 1,
      steps: [
        ['acquire', 'a/x'],
        ['acquire', 'a/y'],
        ['acquire', 'b/z'],
        ['act', 'a/x'],
        ['idle', 'a/x', ['a/y']],
      ],
    },
  ];
  for (const c of cases) {
    const slots = new RemediationSlots(c.cap, c.perNamespace);
    for (const [op, key, woken] of c.steps) {
      const out =
        op === 'acquire'
          ? (slots.acquire(key, uid(key)), [])
          : op === 'forget'
            ? slots.forget(key)
            : slots.sync(uid(key), { phase: 'Healing' }, op === 'act');
      if (woken !== undefined) assert.deepEqual(out, woken, `${c.name}: ${op} ${key}`);
    }
  }
});

test('cordon cap: table', () => {
  const nodes = (n: number, cordoned: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `n${i}`, unschedulable: i < cordoned }));
  assert.deepEqual(cordonAllowed(nodes(3, 0), 'n2', 34), { ok: true });
  assert.equal(cordonAllowed(nodes(3, 1), 'n2', 34).ok, false);
  assert.equal(cordonAllowed(nodes(2, 0), 'n1', 34).ok, false, '1 of 2 is 50%');
  assert.equal(cordonAllowed(nodes(2, 0), 'n1', 50).ok, true);
  const already = cordonAllowed(nodes(3, 1), 'n0', 100);
  assert.equal(!already.ok && already.reason, 'NodeAlreadyCordoned');
  const capped = cordonAllowed(nodes(10, 3), 'n9', 30);
  assert.equal(!capped.ok && capped.reason, 'CordonCapReached');
  assert.equal(cordonAllowed(nodes(1, 0), 'n0', 0).ok, false);
});

test('per-namespace cordon cap: table', () => {
  const node = (name: string, unschedulable: boolean, ns?: string) => ({
    name,
    unschedulable,
    ...(ns !== undefined ? { cordonedForNamespace: ns } : {}),
  });
  const nodes = [
    node('n0', true, 'a'),
    node('n1', true),
    node('n2', false, 'a'),
    node('n3', false),
    node('n4', false),
    node('n5', false),
  ];
  const cases: [string, string, number, boolean][] = [
    ['a holds one cordon, share 1: refused', 'a', 1, false],
    ['a holds one cordon, share 2: allowed', 'a', 2, true],
    ['b holds none: allowed', 'b', 1, true],
    ['share 0: only the cluster-wide cap', 'a', 0, true],
  ];
  for (const [what, namespace, perNamespace, ok] of cases) {
    const r = cordonAllowed(nodes, 'n4', 100, { namespace, perNamespace });
    assert.equal(r.ok, ok, what);
    if (!r.ok) {
      assert.equal(r.reason, 'CordonCapReached');
      assert.match(r.message, /--max-cordoned-nodes-per-namespace=1/);
    }
  }
  assert.equal(
    cordonAllowed(nodes, 'n4', 100, { namespace: 'a', perNamespace: 1 }).ok,
    false,
    'a stale mark on a schedulable node (n2) is not counted, the held one (n0) is',
  );
  assert.equal(
    cordonAllowed(nodes, 'n4', 30, { namespace: 'b', perNamespace: 5 }).ok,
    false,
    'the cluster cap first',
  );
});

test('cordon cap (property): an allowed cordon never exceeds the share', () => {
  fc.assert(
    fc.property(
      fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
      fc.integer({ min: 0, max: 100 }),
      fc.nat(),
      (flags, pct, pick) => {
        const nodes = flags.map((u, i) => ({ name: `n${i}`, unschedulable: u }));
        const node = `n${pick % nodes.length}`;
        if (cordonAllowed(nodes, node, pct).ok) {
          const after = nodes.filter((n) => n.unschedulable || n.name === node).length;
          assert.ok(after * 100 <= pct * nodes.length);
        }
      },
    ),
  );
});

test('targetOwner: the oldest live AITask, then by key', () => {
  const t = (name: string, created: string, deleting = false) => ({
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: created,
      ...(deleting ? { deletionTimestamp: created } : {}),
    },
    spec: { target: {} },
  });
  const owner = (tasks: Parameters<typeof targetOwner>[0]) => targetOwner(tasks, false);
  assert.equal(owner([t('b', '2026-01-01T00:00:01Z'), t('a', '2026-01-01T00:00:02Z')]), 'ns/b');
  assert.equal(owner([t('b', '2026-01-01T00:00:01Z'), t('a', '2026-01-01T00:00:01Z')]), 'ns/a');
  assert.equal(owner([t('b', '2026-01-01T00:00:01Z', true), t('a', '2026-01-01T00:00:02Z')]), 'ns/a');
  assert.equal(owner([]), undefined);
});

test('targetOwner: a task that may not act on the target never owns it (no squatting)', () => {
  const t = (ns: string, created: string, targetNs?: string) => ({
    metadata: { name: 'task', namespace: ns, creationTimestamp: created },
    spec: { target: targetNs === undefined ? {} : { namespace: targetNs } },
  });
  const squatter = t('b', '2026-01-01T00:00:01Z', 'a');
  const rightful = t('a', '2026-01-01T00:00:02Z');
  assert.equal(mayTarget(squatter, false), false);
  assert.equal(mayTarget(squatter, true), true);
  assert.equal(mayTarget(t('a', '', 'a'), false), true, 'its own namespace, spelled out');
  assert.equal(targetOwner([squatter, rightful], false), 'a/task', 'refused: the rightful task owns');
  assert.equal(targetOwner([squatter], false), undefined);
  assert.equal(targetOwner([squatter, rightful], true), 'b/task', 'allowed: the oldest owns');
});

test('targetOwner (property): the owner, if any, may act on the target and is the oldest that may', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          ns: fc.constantFrom('a', 'b', 'c'),
          created: fc.integer({ min: 0, max: 5 }),
          target: fc.constantFrom(undefined, 'a', 'b'),
        }),
        { maxLength: 8 },
      ),
      fc.boolean(),
      (specs, allow) => {
        const tasks = specs.map((x, i) => ({
          metadata: { name: `t${i}`, namespace: x.ns, creationTimestamp: `2026-01-01T00:00:0${x.created}Z` },
          spec: { target: x.target === undefined ? {} : { namespace: x.target } },
        }));
        const owner = targetOwner(tasks, allow);
        const eligible = tasks.filter((x) => mayTarget(x, allow));
        if (eligible.length === 0) return owner === undefined;
        const found = eligible.find((x) => `${x.metadata.namespace}/${x.metadata.name}` === owner);
        assert.ok(found, 'the owner is eligible');
        for (const x of eligible) assert.ok(found.metadata.creationTimestamp <= x.metadata.creationTimestamp);
        return true;
      },
    ),
  );
});

test('a cross-namespace refusal names the seed default when the target namespace is "default"', () => {
  const claim = (ns: string | undefined) => ({
    metadata: { name: 't', namespace: 'shop' },
    spec: { target: { kind: 'Deployment', name: 'web', ...(ns === undefined ? {} : { namespace: ns }) } },
  });
  const plain = crossNamespaceRefusal(claim('payments'));
  assert.equal(
    plain,
    'Deployment payments/web is in another namespace; the operator runs without --allow-cross-namespace',
  );
  const seed = crossNamespaceRefusal(claim('default'));
  assert.ok(seed.startsWith('Deployment default/web is in another namespace'), seed);
  assert.match(seed, /seed release's default \(0\.1\.0 filled in an omitted v1 spec\.namespace\)/);
  assert.match(seed, /remove spec\.target\.namespace \(v1: spec\.namespace\) to target Deployment shop\/web/);
});
