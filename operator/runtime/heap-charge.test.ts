// The heap charge is never below what V8 holds: for objects at the schema's and the
// apiserver's bounds (many short unique strings, escapes, Latin-1 and two-byte and astral
// characters, deep nesting, big arrays, many unique keys), COPIES copies are parsed from JSON
// text as a list answer would be, each with every string and every unshared key made unique
// to its copy (so nothing is shared between copies that a cache would not share), and held;
// the heap's growth over full collections, per copy, is at most the copy's charge.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fullCollection } from '../../lib/full-gc.ts';
import { heapCharge, stringCharge } from './heap-charge.ts';

/** Copies held per measurement: enough that the heap's noise is a few bytes per copy. */
const COPIES = 64;
/** Noise of one measurement in all (the copies' list, collector bookkeeping), in bytes. */
const NOISE = 16 * 1024;

/** Keys the measured objects share between copies, as a schema's field names are. */
const SHARED = new Set(['metadata', 'name', 'finalizers', 'spec', 'status', 'conditions', 'type', 'message']);

/**
 * `s` made unique to copy `copy`: its first character shifted by `copy` within its width
 * (Latin-1 stays Latin-1, any other code unit stays above it), a bijection on each copy's
 * strings, so what is distinct in the original stays distinct, nothing is shared between
 * copies, and the length and width the charge reads stay as they are.
 */
function unique(s: string, copy: number): string {
  const c = s.charCodeAt(0);
  if (Number.isNaN(c)) return s;
  const shifted = c <= 0xff ? (c + copy) % 0x100 : 0x100 + ((c - 0x100 + copy) % 0xff00);
  return String.fromCharCode(shifted) + s.slice(1);
}

function uniqueCopy(value: unknown, copy: number): unknown {
  if (typeof value === 'string') return unique(value, copy);
  if (Array.isArray(value)) return value.map((v) => uniqueCopy(v, copy));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [SHARED.has(k) ? k : unique(k, copy), uniqueCopy(v, copy)]),
    );
  return value;
}

/** The heap's growth per copy while COPIES unique copies of `value`, each parsed from its JSON, are held. */
function measuredGrowth(value: unknown): { growth: number; charge: number } {
  const texts = Array.from({ length: COPIES }, (_, i) => JSON.stringify(uniqueCopy(value, i)));
  const held: unknown[] = new Array<unknown>(COPIES).fill(undefined);
  fullCollection();
  fullCollection();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < COPIES; i++) held[i] = JSON.parse(texts[i] ?? 'null');
  fullCollection();
  fullCollection();
  const grown = process.memoryUsage().heapUsed - before;
  const charge = heapCharge(held[0], SHARED);
  assert.equal(held.length, COPIES);
  return { growth: (grown - NOISE) / COPIES, charge };
}

/** Measurements of one value at most: a growth the copies cause shows in every one of them. */
const TRIES = 3;

/**
 * The charge of `value` is at least the heap's growth per copy, in the least of up to TRIES
 * measurements: what else the process allocates meanwhile (the runner, a lazily compiled
 * function) only ever adds to one, while an undercharge shows in each.
 */
function chargeCovers(value: unknown, what: string): void {
  let least = Infinity;
  let charge = 0;
  for (let i = 0; i < TRIES && least > charge; i++) {
    const m = measuredGrowth(value);
    least = Math.min(least, m.growth);
    charge = m.charge;
  }
  assert.ok(charge >= least, `${what}: charged ${charge} bytes, the heap grew by ${least.toFixed(0)}`);
}

test('a string is charged its header, table entry and characters at one or two bytes each', () => {
  assert.equal(stringCharge(''), 32);
  assert.equal(stringCharge('abcdefgh'), 40);
  assert.equal(stringCharge('abcdefghi'), 48);
  assert.equal(stringCharge('é'.repeat(8)), 40);
  assert.equal(stringCharge('✓'.repeat(4)), 40);
  assert.equal(stringCharge('✓'.repeat(5)), 48);
});

test('7,400 short unique finalizers: charged at least what the heap holds (~4.6x their JSON)', () => {
  const finalizers = Array.from({ length: 7400 }, (_, i) => `f${i.toString(36)}`);
  const task = { metadata: { name: 'flood', finalizers } };
  chargeCovers(task, '7,400 finalizers');
  assert.ok(heapCharge(task, SHARED) > 4 * JSON.stringify(task).length);
});

test('empty objects and arrays, nested deep and listed long, are charged at least what the heap holds', () => {
  chargeCovers(
    Array.from({ length: 5000 }, () => ({})),
    '5,000 empty objects',
  );
  chargeCovers(
    Array.from({ length: 5000 }, () => []),
    '5,000 empty arrays',
  );
  let deep: unknown = 'x';
  for (let i = 0; i < 2000; i++) deep = i % 2 === 0 ? [deep] : { [`k${i}`]: deep };
  chargeCovers(deep, '2,000 levels');
  chargeCovers(
    Array.from({ length: 20_000 }, (_, i) => i + 0.5),
    '20,000 doubles',
  );
});

test('objects of many unique keys, fast and dictionary, are charged at least what the heap holds', () => {
  for (const n of [1, 4, 30, 40, 200, 2000])
    chargeCovers(Object.fromEntries(Array.from({ length: n }, (_, i) => [`key-${i}`, i])), `${n} keys`);
});

/** Characters a tenant may write: ASCII, JSON escapes, Latin-1, two-byte and astral. */
const character = fc.oneof(
  fc.constantFrom('a', 'Z', '0', '-', '.', '/'),
  fc.constantFrom('"', '\\', '\n', '\t', '\u0000', '\u001f'),
  fc.constantFrom('é', 'ÿ', '\u00a0'),
  fc.constantFrom('✓', '中', '\u2028', '\uffff'),
  fc.constantFrom('😀', '\ud800', '\udfff'),
);
const text = (maxLength: number): fc.Arbitrary<string> =>
  fc.array(character, { maxLength }).map((cs) => cs.join(''));

/** JSON data as a tenant may shape it: strings short and long, lists, maps of its own keys and of the schema's. */
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text(12),
    text(400),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 40 }),
    fc.array(text(6), { minLength: 100, maxLength: 3000 }),
    fc.dictionary(text(16), tie('json'), { maxKeys: 40 }),
    fc.record({ metadata: fc.record({ name: text(63), finalizers: fc.array(text(8), { maxLength: 500 }) }) }),
    fc.record({ type: text(32), message: tie('json') }, { requiredKeys: ['type'] }),
  ),
}));

test('any JSON a tenant may write is charged at least what the heap holds', () => {
  fc.assert(
    fc.property(json, (value) => {
      chargeCovers(value, JSON.stringify(value).slice(0, 200));
    }),
    { numRuns: 60 },
  );
});
