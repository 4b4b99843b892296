// Table test of the terminal-error classification (terminal.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiErrorFrom } from '../../lib/kube/errors.ts';
import { terminalFailure } from './terminal.ts';

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
