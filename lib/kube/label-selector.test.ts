// Table test of the label selector check (label-selector.ts) against what apimachinery's
// labels.Parse accepts and refuses; cluster tests send the refused ones to a real apiserver.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkLabelSelector } from './label-selector.ts';

test('selectors the apiserver parses pass', () => {
  const valid = [
    '',
    '   ',
    'x',
    '!x',
    'x=a',
    'x==a',
    'x!=a',
    'x=',
    'x=,z= ',
    'x=a,y=b,z=c',
    '  x  =  a  ,  y ',
    'x in (a)',
    'x in (a,b,c)',
    'x notin (a,b)',
    'x in ()',
    'x in (,a)',
    'x in (a,)',
    'x in (a,,b)',
    'x notin (in)',
    'notin=x',
    'in in (in)',
    'x>1',
    'x<9223372036854775807',
    'example.com/x=y',
    'app.kubernetes.io/name=web,tier!=db',
    'x=a\0garbage',
    `k=${'v'.repeat(63)}`,
    `${'k'.repeat(63)}=v`,
  ];
  for (const s of valid) assert.deepEqual(checkLabelSelector(s), { ok: true }, JSON.stringify(s));
});

test('selectors the apiserver answers 400 are refused, saying why', () => {
  const invalid: [string, RegExp][] = [
    ['x=a||y=b', /value 'a\|\|y'/],
    ['x==a==b', /expected: ',' or 'end of string'/],
    ['!x=a', /expected: ',' or 'end of string'/],
    ['x<a', /must be an integer/],
    ['x>1,z<a', /must be an integer/],
    ['x>9223372036854775808', /must be an integer/],
    ['x>', /must be an integer/],
    ['x in a', /expected: '\('/],
    ['x in (a', /expected: ',' or '\)'/],
    ['x in (a,,)', /expected: ',', or identifier/],
    ['x=a,', /identifier after ','/],
    [',x=a', /expected: !, identifier, or 'end of string'/],
    ['x=a b', /found 'b'/],
    ['(x)', /expected: !, identifier/],
    ['x=(a)', /expected: identifier/],
    ['x=a/b', /value 'a\/b'/],
    ['a/b/c=x', /at most one '\/'/],
    ['Example.com/x=y', /prefix/],
    ['/x=y', /prefix/],
    ['x/=y', /name part must be non-empty/],
    ['-x=y', /alphanumeric/],
    [`k=${'v'.repeat(64)}`, /no more than 63/],
    [`${'k'.repeat(64)}=v`, /no more than 63/],
    ['x=é', /value 'é'/],
    ['x = a, !', /expected: identifier/],
    ['x <> 1', /expected: identifier/],
    ['x !! y', /expected: in, notin/],
  ];
  for (const [s, why] of invalid) {
    const got = checkLabelSelector(s);
    if (got.ok) assert.fail(`${JSON.stringify(s)} passed`);
    assert.match(got.message, why, JSON.stringify(s));
  }
});
