// Table tests of the schema bounds check: one row per kind of bound, the removable
// property each violation names, and a value far deeper than any stack.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { violations } from './bounds.ts';
import type { JSONSchemaProps } from '../schema/infer.ts';
import { specSchema as v2Spec } from '../schema/v2.ts';

const schema: JSONSchemaProps = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 3, pattern: '^[a-z]+$' },
    n: { type: 'integer', minimum: 10, maximum: 20 },
    mode: { type: 'string', enum: ['A', 'B'] },
    ratio: { type: 'number' },
    list: { type: 'array', maxItems: 2, items: { type: 'object', properties: { x: { type: 'boolean' } } } },
    free: { type: 'object' },
  },
};

test('each bound, with the property whose removal clears it', async (t) => {
  const rows: [string, unknown, { path: string; why: string; remove?: string[] }[]][] = [
    [
      'within bounds',
      { name: 'ab', n: 10, mode: 'B', ratio: -1.5, list: [{ x: true }], free: { any: 1 } },
      [],
    ],
    ['below minimum', { name: 'a', n: 9 }, [{ path: 'n', why: 'below 10', remove: ['n'] }]],
    ['above maximum', { name: 'a', n: 21 }, [{ path: 'n', why: 'above 20', remove: ['n'] }]],
    ['not an integer', { name: 'a', n: 10.5 }, [{ path: 'n', why: 'not an integer', remove: ['n'] }]],
    [
      'not a finite number',
      { name: 'a', ratio: 'x' },
      [{ path: 'ratio', why: 'not a number', remove: ['ratio'] }],
    ],
    ['enum', { name: 'a', mode: 'C' }, [{ path: 'mode', why: 'not one of A, B', remove: ['mode'] }]],
    ['required name missing', {}, [{ path: 'name', why: 'required' }]],
    ['required name too long (not removable)', { name: 'abcd' }, [{ path: 'name', why: 'longer than 3' }]],
    ['code points, not UTF-16 units', { name: '😀😀😀' }, [{ path: 'name', why: 'does not match ^[a-z]+$' }]],
    ['empty', { name: '' }, [{ path: 'name', why: 'shorter than 1' }]],
    ['undeclared', { name: 'a', evil: 1 }, [{ path: 'evil', why: 'not declared', remove: ['evil'] }]],
    [
      'inside a list: the list goes',
      { name: 'a', list: [{ x: 1 }] },
      [{ path: 'list[0].x', why: 'not a boolean', remove: ['list'] }],
    ],
    [
      'too many items',
      { name: 'a', list: [{}, {}, {}] },
      [{ path: 'list', why: 'more than 2 items', remove: ['list'] }],
    ],
    ['not an object', 'x', [{ path: '', why: 'not an object' }]],
  ];
  for (const [name, value, want] of rows)
    await t.test(name, () => assert.deepEqual(violations(schema, value), want));
});

test('the v2 spec bounds the issue names: intervalSeconds 0 is out, 10 is in', () => {
  const spec = {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 1 },
    remediation: { action: 'Noop' },
  };
  assert.deepEqual(violations(v2Spec, { ...spec, intervalSeconds: 10 }, 'spec'), []);
  assert.deepEqual(violations(v2Spec, { ...spec, intervalSeconds: 0 }, 'spec'), [
    { path: 'spec.intervalSeconds', why: 'below 10', remove: ['intervalSeconds'] },
  ]);
});

test('a value 100,000 levels deep is walked without recursion', () => {
  const deep = JSON.parse(`{"name":"a","free":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`) as unknown;
  assert.deepEqual(violations(schema, deep), []);
  const list = JSON.parse(`{"name":"a","list":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`) as unknown;
  assert.equal(violations(schema, list)[0]?.why, 'not an object');
});
