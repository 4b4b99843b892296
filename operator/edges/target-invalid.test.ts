// The tenant-error classification of a target's selector (target-invalid.ts): a selector that
// does not parse, or a request the apiserver refuses for what it carried, is the target
// owner's TargetInvalidError naming the object and the field; every other failure is thrown
// as it was (a retry may fix it), and a selector that parses is sent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiErrorFrom } from '../../lib/kube/errors.ts';
import { assertSelector, carrying, TargetInvalidError } from './target-invalid.ts';

const OBJECT = 'Shard.example.com mallory/bad';
const FIELD = '/scale status.selector';

test('a selector that does not parse is the target’s TargetInvalidError, naming object and field; one that parses passes', () => {
  assert.throws(
    () => assertSelector(OBJECT, FIELD, 'app in (web'),
    (err: unknown) =>
      err instanceof TargetInvalidError &&
      err.object === OBJECT &&
      err.field === FIELD &&
      err.message.startsWith(
        `the ${FIELD} of ${OBJECT} does not parse as a label selector: unable to parse requirement`,
      ),
  );
  for (const ok of ['app=web', 'app in (web,api),!canary', ''])
    assert.doesNotThrow(() => assertSelector(OBJECT, FIELD, ok), ok);
});

test('the apiserver’s 400 or 422 on a request carrying it is TargetInvalidError with its message; other failures are thrown as they are', async () => {
  const refusal = (code: number, message: string) =>
    apiErrorFrom(code, {
      kind: 'Status',
      status: 'Failure',
      code,
      reason: code === 400 ? 'BadRequest' : 'Invalid',
      message,
    });
  for (const code of [400, 422]) {
    const err = await carrying(OBJECT, FIELD, () =>
      Promise.reject(refusal(code, 'unable to parse requirement: x')),
    ).catch((e: unknown) => e);
    assert.ok(err instanceof TargetInvalidError, `${code}`);
    assert.equal(
      err.message,
      `the ${FIELD} of ${OBJECT} was refused by the apiserver: unable to parse requirement: x`,
    );
  }
  for (const other of [
    apiErrorFrom(500, 'etcd is down'),
    apiErrorFrom(403, { kind: 'Status', reason: 'Forbidden', message: 'no' }),
    apiErrorFrom(409, { kind: 'Status', reason: 'Conflict', message: 'stale' }),
    apiErrorFrom(0, undefined),
    new TypeError('bug'),
  ]) {
    const err = await carrying(OBJECT, FIELD, () => Promise.reject(other)).catch((e: unknown) => e);
    assert.equal(err, other, other.message);
  }
  assert.equal(await carrying(OBJECT, FIELD, () => Promise.resolve(7)), 7);
});
