// Attacks on the conversion webhook the operator hosts, by anyone who reaches its port (a
// tenant's pod can): a body over the 8 MiB limit, and 24 reviews of 6 MiB at once. The first
// gets 413; of the flood, those beyond the cap of 8 reviews in flight (or the 10 MiB byte
// budget) are refused — 429, or the connection closed while the refused body is still being
// sent — and none gets a 5xx; the rest convert. The process keeps serving: conversions through
// the apiserver still answer, and the other tenant's changes are still reconciled within 15 s.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpsCall } from '../support/https-call.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** A ConversionReview of about `bytes` bytes: one v1alpha1 AITask padded by an annotation. */
function reviewOf(bytes: number, uid: string): string {
  const doc = (pad: string): string =>
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid,
        desiredAPIVersion: 'aiops.example.com/v2',
        objects: [
          {
            apiVersion: 'aiops.example.com/v1alpha1',
            kind: 'AITask',
            metadata: { name: 'flood', namespace: 'mallory', uid, annotations: { pad } },
            spec: { target: 'web', threshold: 80, action: 'ScaleUp' },
          },
        ],
      },
    });
  return doc('x'.repeat(Math.max(0, bytes - doc('').length)));
}

const post = (body: string) =>
  httpsCall(stage.webhook.port, '/convert', {
    ca: stage.webhook.ca,
    headers: { 'Content-Type': 'application/json' },
    body,
  });

test('a review over 8 MiB gets 413', async () => {
  const res = await post(reviewOf(9 * 1024 * 1024, 'big'));
  assert.equal(res.status, 413, res.text.slice(0, 200));
  await undisturbed();
});

test('24 reviews of 6 MiB at once: each converts or is refused, none gets a 5xx; conversions and reconciles go on', async () => {
  // A refused review's connection may close before its 429 is read: that is a refusal too.
  const refusedMidBody = { status: 0, text: 'connection closed while sending' };
  const results = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      post(reviewOf(6 * 1024 * 1024, `flood-${i}`)).catch((err: unknown) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE' || code === 'ECONNRESET') return refusedMidBody;
        throw err;
      }),
    ),
  );
  const codes = results.map((r) => r.status);
  for (const code of codes) assert.ok(code === 200 || code === 429 || code === 0, `answered ${code}`);
  assert.ok(
    codes.some((c) => c !== 200),
    'the cap refused some of the flood',
  );
  assert.ok(codes.includes(200), 'and converted the rest');
  for (const r of results.filter((x) => x.status === 200)) assert.match(r.text, /"status":"Success"/);
  const listed = await stage.adminTasks.v1.list(undefined);
  assert.ok(Array.isArray(listed.items), 'a LIST at v1 converts through the webhook');
  await undisturbed();
});
