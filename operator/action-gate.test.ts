// Table tests of the crash-test hook's setting and of the gate's answers (action-gate.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../lib/log.ts';
import { actionGate, parsePausePoints, type ActionPoint } from './action-gate.ts';

test('AIOPS_TEST_PAUSE_AT: off by default, a comma-separated list of points, unknown points refused', () => {
  const cases: [string | undefined, ActionPoint[] | RegExp][] = [
    [undefined, []],
    ['', []],
    ['before-action', ['before-action']],
    [' before-action , after-action ,', ['before-action', 'after-action']],
    ['before-cleanup', ['before-cleanup']],
    ['before-decision,before-decision', ['before-decision']],
    ['between', /unknown point "between"/],
  ];
  for (const [value, want] of cases) {
    if (want instanceof RegExp) assert.throws(() => parsePausePoints(value), want, String(value));
    else assert.deepEqual([...parsePausePoints(value)], want, String(value));
  }
});

test('the gate stops a remediation before the decision and before the action once leadership is gone, never after it', async () => {
  const log = createLogger('test', { level: 'error', write: () => undefined });
  for (const [leading, point, want] of [
    [true, 'before-decision', true],
    [true, 'before-action', true],
    [true, 'after-action', true],
    [false, 'before-decision', false],
    [false, 'before-action', false],
    [false, 'after-action', true],
    [true, 'before-cleanup', true],
    [false, 'before-cleanup', false],
  ] as const) {
    const gate = actionGate(() => leading, new Set(), log);
    assert.equal(await gate(point, 'd1'), want, `${point} while leading=${leading}`);
  }
});
