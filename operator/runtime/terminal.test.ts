// Table test of the terminal-error classification (terminal.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiErrorFrom } from '../../lib/kube/errors.ts';
import { refusedInput, terminalFailure } from './terminal.ts';

test('Forbidden, Invalid and a kind that is not served are terminal; the rest may be retried', () => {
  const status = (reason: string, details?: Record<string, string>) => ({
    kind: 'Status',
    status: 'Failure',
    reason,
    message: `m ${reason}`,
    ...(details ? { details } : {}),
  });
  const cases: [unknown, string | undefined][] = [
    [apiErrorFrom(403, status('Forbidden', { name: 'x', kind: 'controllerrevisions' })), 'Forbidden'],
    [apiErrorFrom(422, status('Invalid', { name: 'x' })), 'Invalid'],
    [apiErrorFrom(404, status('NotFound')), 'KindNotServed'],
    [apiErrorFrom(404, '404 page not found'), 'KindNotServed'],
    [apiErrorFrom(404, status('NotFound', { name: 'web', kind: 'deployments' })), undefined],
    [apiErrorFrom(409, status('Conflict', { name: 'x' })), undefined],
    [apiErrorFrom(429, status('TooManyRequests')), undefined],
    [apiErrorFrom(500, status('InternalError')), undefined],
    [apiErrorFrom(401, status('Unauthorized')), undefined],
    [new Error('socket hang up'), undefined],
  ];
  for (const [err, want] of cases) assert.equal(terminalFailure(err)?.reason, want, (err as Error).message);
});

test('a request refused for what it carried (400, 422) says the apiserver’s message; nothing else does', () => {
  const status = (code: number, reason: string) => ({
    kind: 'Status',
    status: 'Failure',
    code,
    reason,
    message: `m ${reason}`,
  });
  const cases: [unknown, string | undefined][] = [
    [apiErrorFrom(400, status(400, 'BadRequest')), 'm BadRequest'],
    [apiErrorFrom(400, 'unable to parse requirement'), 'unable to parse requirement'],
    [apiErrorFrom(422, status(422, 'Invalid')), 'm Invalid'],
    [apiErrorFrom(403, status(403, 'Forbidden')), undefined],
    [apiErrorFrom(404, status(404, 'NotFound')), undefined],
    [apiErrorFrom(409, status(409, 'Conflict')), undefined],
    [apiErrorFrom(429, status(429, 'TooManyRequests')), undefined],
    [apiErrorFrom(500, status(500, 'InternalError')), undefined],
    [apiErrorFrom(0, undefined), undefined],
    [new TypeError('x is undefined'), undefined],
  ];
  for (const [err, want] of cases) assert.equal(refusedInput(err), want, (err as Error).message);
  assert.equal(
    terminalFailure(apiErrorFrom(400, status(400, 'BadRequest'))),
    undefined,
    'a 400 of the operator’s own request is its own error',
  );
});
