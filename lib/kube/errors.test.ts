// The typed client's error mapping: each HTTP status (with and without a metav1.Status
// body) becomes the class callers branch on, keeping the server's message and details.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AlreadyExistsError,
  BadRequestError,
  apiErrorFrom,
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidError,
  isRetryable,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
  UnauthorizedError,
  ApiError,
} from './errors.ts';

const status = (code: number, reason: string, message: string, details?: object) => ({
  kind: 'Status',
  status: 'Failure',
  code,
  reason,
  message,
  ...(details ? { details } : {}),
});

test('each status code maps to its class', async (t) => {
  const cases: [number, unknown, new (...a: never[]) => ApiError, boolean][] = [
    [401, status(401, 'Unauthorized', 'Unauthorized'), UnauthorizedError, false],
    [
      403,
      status(403, 'Forbidden', 'aitasks.aiops.example.com "x" is forbidden: User "u" cannot get resource'),
      ForbiddenError,
      false,
    ],
    [404, status(404, 'NotFound', 'aitasks.aiops.example.com "x" not found'), NotFoundError, false],
    [
      409,
      status(
        409,
        'Conflict',
        'the object has been modified; please apply your changes to the latest version',
      ),
      ConflictError,
      true,
    ],
    [
      409,
      status(409, 'AlreadyExists', 'aitasks.aiops.example.com "x" already exists'),
      AlreadyExistsError,
      false,
    ],
    [410, status(410, 'Expired', 'too old resource version: 1 (42)'), GoneError, false],
    [
      422,
      status(422, 'Invalid', 'AITask.aiops.example.com "x" is invalid: spec.threshold: Invalid value'),
      InvalidError,
      false,
    ],
    [
      429,
      status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
        retryAfterSeconds: 5,
      }),
      TooManyRequestsError,
      true,
    ],
    [
      500,
      status(500, 'InternalError', 'conversion webhook for aiops.example.com/v2 failed'),
      ServerError,
      true,
    ],
    [503, 'service unavailable', ServerError, true],
    [0, undefined, ServerError, true],
    [400, status(400, 'BadRequest', 'bad request'), BadRequestError, false],
  ];
  for (const [code, body, cls, retryable] of cases) {
    await t.test(`${code} ${cls.name}`, () => {
      const err = apiErrorFrom(code, body);
      assert.ok(err instanceof cls);
      assert.equal(err.code, code);
      assert.equal(isRetryable(err), retryable);
      if (typeof body === 'object' && body !== null)
        assert.equal(err.message, (body as { message: string }).message);
    });
  }
});

test('a plain-text body becomes the message; an empty one falls back to the status line', () => {
  assert.equal(apiErrorFrom(503, 'service unavailable\n').message, 'service unavailable');
  assert.equal(apiErrorFrom(502, undefined).message, 'HTTP 502');
});

test('Invalid lists the fields; TooManyRequests carries Retry-After', () => {
  const invalid = apiErrorFrom(
    422,
    status(422, 'Invalid', 'invalid', {
      causes: [{ field: 'spec.threshold', message: 'must be ≥ 0', reason: 'FieldValueInvalid' }],
    }),
  );
  assert.ok(invalid instanceof InvalidError);
  assert.deepEqual(invalid.causes, [{ field: 'spec.threshold', message: 'must be ≥ 0' }]);
  const throttled = apiErrorFrom(429, status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 7 }));
  assert.ok(throttled instanceof TooManyRequestsError);
  assert.equal(throttled.retryAfterSeconds, 7);
  assert.equal(throttled.name, 'TooManyRequestsError');
});
