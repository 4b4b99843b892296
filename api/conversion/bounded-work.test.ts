// Conversion's work is bounded by what a valid object holds, whatever it is sent: the hostile
// shape (millions of zeros in status.conditions, at each version) is refused after reading at
// most the version's value budget, counted by a Proxy on the list; the bounds check reports
// an over-long list without reading its items and stops at its violation cap; and an object
// produced at v2 never breaks v2's CEL rules, a signed stash included (minReplicas 9 >
// maxReplicas 1 restored through v1 is skipped, and a v2 output that would break a rule is
// refused, as the sender's fault or the webhook's).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BODY_MAX_VALUES, convert, MAX_DEPTH, METADATA_MAX_VALUES, type LooseAITask } from './convert.ts';
import { MORE_VIOLATIONS, overBudget, violations, VIOLATIONS_MAX } from './bounds.ts';
import { ConversionError } from './errors.ts';
import type { StashRejection } from './stash.ts';
import { VERSIONS, type VersionName } from '../crd.ts';
import { statusSchema as v2Status } from '../schema/v2.ts';
import { MINIMAL_SPECS } from '../../test/support/conversion-reviews.ts';

const G = 'aiops.example.com';
const KEY = Buffer.alloc(32, 7);
const HOSTILE_ITEMS = 4_000_000;

const SPECS: Record<VersionName, Record<string, unknown>> = MINIMAL_SPECS;

const task = (version: VersionName, spec: Record<string, unknown>, status?: Record<string, unknown>) =>
  ({
    apiVersion: `${G}/${version}`,
    kind: 'AITask',
    metadata: { name: 'web-heal', namespace: 'prod', uid: 'u-1' },
    spec,
    ...(status === undefined ? {} : { status }),
  }) satisfies LooseAITask;

/** Millions of zeros behind a Proxy that counts the items read. */
function countedZeros(): { list: unknown[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(new Array<number>(HOSTILE_ITEMS).fill(0), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { list, reads: () => reads };
}

test('every version has a finite value budget, and a valid object fits it', () => {
  for (const v of VERSIONS) {
    assert.ok(
      Number.isFinite(BODY_MAX_VALUES[v]) && BODY_MAX_VALUES[v] < 100_000,
      `${v}: ${BODY_MAX_VALUES[v]}`,
    );
    for (const to of VERSIONS) if (to !== v) convert(task(v, SPECS[v]), `${G}/${to}`, { key: KEY });
  }
});

test('millions of zeros in status.conditions are refused at each version, reading at most the budget', async (t) => {
  for (const from of VERSIONS)
    for (const to of VERSIONS)
      await t.test(`${from} → ${to}`, () => {
        const { list, reads } = countedZeros();
        assert.throws(
          () => convert(task(from, SPECS[from], { conditions: list }), `${G}/${to}`, { key: KEY }),
          (err: unknown) =>
            err instanceof ConversionError &&
            err.fault === 'input' &&
            err.message.includes(`more than ${BODY_MAX_VALUES[from]} values`),
        );
        assert.ok(reads() <= BODY_MAX_VALUES[from], `${reads()} items read`);
      });
});

test('metadata and depth have budgets too', () => {
  const wide: LooseAITask = task('v2', SPECS.v2);
  wide.metadata = { ...wide.metadata, managedFields: new Array<number>(METADATA_MAX_VALUES).fill(0) };
  assert.throws(() => convert(wide, `${G}/v1`, { key: KEY }), /metadata holds more than 65536 values/);
  const deep = JSON.parse(`${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`) as unknown;
  assert.throws(
    () => convert(task('v1', { ...SPECS.v1, extra: deep }), `${G}/v2`, { key: KEY }),
    /nested deeper than 32 levels/,
  );
  assert.equal(overBudget([[1]], 3, 3), undefined);
  assert.equal(overBudget([[1]], 2, 3), 'holds more than 2 values');
  assert.equal(overBudget([[[1]]], 10, 2), 'is nested deeper than 2 levels');
});

test('the bounds check reports an over-long list whole, reading none of its items', () => {
  const { list, reads } = countedZeros();
  assert.deepEqual(violations(v2Status, { conditions: list }, 'status'), [
    { path: 'status.conditions', why: 'more than 32 items', remove: ['conditions'] },
  ]);
  assert.equal(reads(), 0);
});

test('the bounds check stops after its violation cap and says there are more', () => {
  const noisy = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 0]));
  const found = violations(v2Status, noisy, 'status');
  assert.equal(found.length, VIOLATIONS_MAX + 1);
  assert.deepEqual(found.at(-1), { path: 'status', why: MORE_VIOLATIONS });
  assert.equal(violations(v2Status, { phase: 'Nope' }).length, 1, 'under the cap, no marker');
});

const scale = (minReplicas: number, maxReplicas: number) => ({
  ...SPECS.v2,
  remediation: { action: 'ScaleUp', scale: { minReplicas, maxReplicas } },
});

test('a signed stash restored through v1 never yields minReplicas > maxReplicas at v2', () => {
  fc.assert(
    fc.property(fc.nat(20), fc.integer({ min: 1, max: 20 }), (min, max) => {
      const rejected: StashRejection[] = [];
      const atV1 = convert(task('v2', scale(min, max)), `${G}/v1`, { key: KEY });
      const back = convert(atV1, `${G}/v2`, { key: KEY, onStashRejected: (r) => rejected.push(r) });
      const s = (back.spec['remediation'] as { scale?: { minReplicas?: number; maxReplicas?: number } })
        .scale;
      if (min <= max) assert.deepEqual(s, { minReplicas: min, maxReplicas: max });
      else {
        assert.ok(
          s?.minReplicas === undefined || s.maxReplicas === undefined || s.minReplicas <= s.maxReplicas,
        );
        assert.ok(rejected.some((r) => r.reason === 'out_of_bounds' && r.detail.includes('minReplicas')));
      }
    }),
    { numRuns: 200, seed: 4242 },
  );
});

test("an object produced at v2 that breaks v2's rules is refused: the sender's fault when it broke its own", () => {
  const badV1 = task('v1', { ...SPECS.v1, targetDeployment: 'Not_A_Name' });
  assert.throws(
    () => convert(badV1, `${G}/v2`, { key: KEY }),
    (err: unknown) =>
      err instanceof ConversionError &&
      err.fault === 'input' &&
      /would break the rules a v2 write is held to: spec\.target\.name: does not match/.test(err.message),
  );
});
