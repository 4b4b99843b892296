// Integration: a note longer than the apiserver's 1 KiB (counted in UTF-8 bytes) is cut to
// fit instead of being refused with the whole Event: 2,000 multi-byte characters are
// recorded, shortened to at most 1024 bytes, with no code point split.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../lib/log.ts';
import { freshNamespace } from '../../test/support/cluster.ts';
import { clients } from '../../test/support/remediation.ts';
import { cutUtf8, EventRecorder, NOTE_MAX_BYTES, REPORTING_CONTROLLER } from './events.ts';

test('a note of 2,000 multi-byte characters is recorded, cut to 1 KiB of UTF-8', async (t) => {
  const ns = await freshNamespace('event-notes', (fn) => t.after(fn));
  const c = await clients();
  const warnings: string[] = [];
  const log = createLogger('test', { level: 'warn', write: (line) => warnings.push(line) });
  const recorder = new EventRecorder(c.transport, 'event-notes-test', log);
  const note = 'é€😀'.repeat(667).slice(0, 2000);
  assert.equal(note.length, 2000);
  const task = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'notes', namespace: ns, uid: '00000000-0000-4000-8000-000000000001' },
  } as const;
  await recorder.record(task, [{ type: 'Normal', reason: 'Reconciled', action: 'Record', note }]);
  assert.deepEqual(warnings, [], 'the Event was not refused');

  const recorded = (await c.events.list(ns)).items.filter(
    (e) => e.reportingController === REPORTING_CONTROLLER,
  );
  assert.equal(recorded.length, 1, 'one Event created');
  const kept = recorded[0]?.note ?? '';
  assert.ok(Buffer.byteLength(kept, 'utf8') <= NOTE_MAX_BYTES, 'within 1 KiB');
  assert.ok(kept.length < note.length && note.startsWith(kept), 'a cut prefix of the note');
  assert.equal(kept, cutUtf8(note, NOTE_MAX_BYTES));
  assert.ok(!kept.includes('\uFFFD'), 'no code point split');
});
