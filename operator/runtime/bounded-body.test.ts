import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BoundedBody, DEFAULT_MAX_RESPONSE_BYTES, readBounded } from './bounded-body.ts';

const streamOf = (chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });

test('BoundedBody keeps every chunk up to the limit and refuses from the first byte past it (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }), fc.nat(400), (chunks, max) => {
      const body = new BoundedBody(max);
      const accepted = chunks.map((c) => body.push(c));
      let total = 0;
      const want = chunks.map((c) => (total += c.byteLength) <= max);
      assert.deepEqual(accepted, want);
      const kept = chunks.filter((_, i) => want[i]);
      assert.equal(body.text(), Buffer.concat(kept).toString('utf8'));
    }),
  );
});

test('BoundedBody: the default limit is 1 MiB, exactly that many bytes pass, one more does not', () => {
  assert.equal(DEFAULT_MAX_RESPONSE_BYTES, 1024 * 1024);
  const body = new BoundedBody();
  assert.equal(body.push(new Uint8Array(DEFAULT_MAX_RESPONSE_BYTES)), true);
  assert.equal(body.push(new Uint8Array(1)), false);
});

test('readBounded: the text within the limit, undefined past it (the stream is cancelled), "" for no body', async () => {
  const enc = new TextEncoder();
  assert.equal(await readBounded(streamOf([enc.encode('{"a":'), enc.encode('1}')]), 7), '{"a":1}');
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(new Uint8Array(1000));
    },
    cancel() {
      cancelled = true;
    },
  });
  assert.equal(await readBounded(endless, 10_000), undefined);
  assert.ok(cancelled, 'the endless stream was cancelled');
  assert.equal(await readBounded(null), '');
});
