// Table test of the status after a terminal failure (terminal-status.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { terminalStatus } from './terminal-status.ts';

const task = (status?: v2.Status): Pick<v2.AITask, 'metadata' | 'spec' | 'status'> => ({
  metadata: { name: 't', namespace: 'ns', generation: 3 },
  spec: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 1 },
    remediation: { action: 'Noop' },
  },
  ...(status ? { status } : {}),
});

test('a terminal failure: phase Failed, Stalled=True with the reason, the generation observed, one Warning', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  for (const [prev, reason] of [
    [undefined, 'Forbidden'],
    [{ phase: 'Monitoring', attempts: 2 } satisfies v2.Status, 'Invalid'],
    [{ phase: 'Healing', observedGeneration: 2 } satisfies v2.Status, 'KindNotServed'],
  ] as const) {
    const { status, events } = terminalStatus(task(prev), { reason, message: 'no' }, 600_000, now);
    assert.equal(status.phase, 'Failed');
    assert.equal(status.observedGeneration, 3);
    assert.equal(status.attempts, prev?.attempts);
    const stalled = (status.conditions ?? []).find((c) => c.type === 'Stalled');
    assert.ok(stalled);
    assert.deepEqual([stalled.status, stalled.reason], ['True', reason]);
    assert.match(stalled.message, /no retry can fix this: tried again in 10 min or when the spec changes/);
    assert.equal((status.conditions ?? []).find((c) => c.type === 'Ready')?.status, 'False');
    assert.deepEqual(
      events.map((e) => [e.type, e.reason]),
      [['Warning', reason]],
    );
  }
});
