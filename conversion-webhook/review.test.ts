// Table and fuzz tests of the ConversionReview protocol rules, without a network.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { handleReview, SERVED_API_VERSIONS } from './review.ts';
import { v1alpha1Task, v1Task, v2Task } from '../test/support/arbitraries.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../api/install.ts';

const KEY = Buffer.alloc(32, 3);
const review = (request: unknown) =>
  JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request });

test('a valid review converts every object in order and echoes the uid', () => {
  const objects = fc.sample(fc.oneof(v1alpha1Task, v1Task, v2Task), { numRuns: 50, seed: 7 });
  const out = handleReview(review({ uid: 'u-1', desiredAPIVersion: 'aiops.example.com/v1', objects }), KEY);
  assert.equal(out.httpStatus, 200);
  assert.equal(out.body.response.uid, 'u-1');
  assert.deepEqual(out.body.response.result, { status: 'Success' });
  const converted = out.body.response.convertedObjects ?? [];
  assert.equal(converted.length, objects.length);
  converted.forEach((o, i) => {
    assert.equal(o.apiVersion, 'aiops.example.com/v1');
    assert.equal(o.metadata.name, objects[i]?.metadata.name);
    assert.equal(o.metadata.uid, objects[i]?.metadata.uid);
  });
});

test("one object's bad stash is ignored and reported; the review still converts every object", () => {
  const objects = fc.sample(v1Task, { numRuns: 5, seed: 11 });
  const bad = objects[2];
  assert.ok(bad);
  bad.metadata.annotations = { [CONVERSION_ANNOTATION]: '{not json' };
  const out = handleReview(review({ uid: 'u-2', desiredAPIVersion: 'aiops.example.com/v2', objects }), KEY);
  assert.equal(out.httpStatus, 200);
  assert.deepEqual(out.body.response.result, { status: 'Success' });
  assert.equal(out.body.response.convertedObjects?.length, 5);
  assert.deepEqual(
    out.stashRejections.map((r) => [r.object, r.reason]),
    [[`${bad.metadata.namespace ?? ''}/${bad.metadata.name ?? ''}`, 'unsigned']],
  );
});

test('without a key yet, a review fails only when it must sign or verify a stash; any other converts as with the key', () => {
  const objects = fc.sample(fc.oneof(v1alpha1Task, v1Task, v2Task), { numRuns: 100, seed: 5 });
  const pending = {
    pending: 'conversion key not loaded yet from Secret ns/s: forbidden; retrying every 10 s',
  };
  const seen = { converted: 0, refused: 0 };
  for (const [i, o] of objects.entries())
    for (const desired of ['v1alpha1', 'v1', 'v2']) {
      const body = review({ uid: `p-${i}`, desiredAPIVersion: `aiops.example.com/${desired}`, objects: [o] });
      const without = handleReview(body, pending);
      const withKey = handleReview(body, KEY);
      assert.deepEqual(withKey.body.response.result, { status: 'Success' });
      if (without.body.response.result.status === 'Success') {
        seen.converted++;
        assert.deepEqual(without.body, withKey.body, 'the key played no part');
        assert.equal(without.stashKeyMissing, false);
        continue;
      }
      seen.refused++;
      assert.equal(without.stashKeyMissing, true);
      assert.equal(without.httpStatus, 200);
      assert.match(
        without.body.response.result.message,
        /^cannot convert object 0 \(.*\) to aiops\.example\.com\/v\w+: it needs the conversion stash key \(to write or verify its stash\), and conversion key not loaded yet from Secret ns\/s: forbidden; retrying every 10 s$/,
      );
      assert.equal(without.body.response.convertedObjects, undefined);
      assert.ok(
        withKey.body.response.convertedObjects?.[0]?.metadata.annotations?.[CONVERSION_MAC_ANNOTATION],
        'with the key, this conversion signs a stash',
      );
    }
  assert.ok(seen.converted > 0 && seen.refused > 0, JSON.stringify(seen));
});

test('bad reviews get a specific Failure', async (t) => {
  const ok = fc.sample(v1Task, { numRuns: 1, seed: 1 })[0];
  const cases: [string, string, number, RegExp][] = [
    ['malformed JSON', '{"kind":', 400, /not valid JSON/],
    ['not an object', '[1,2]', 400, /must be a ConversionReview object/],
    [
      'another kind',
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'AdmissionReview' }),
      400,
      /kind must be ConversionReview/,
    ],
    [
      'v1beta1 review',
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', request: {} }),
      400,
      /not supported/,
    ],
    [
      'no request',
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }),
      400,
      /request is missing/,
    ],
    [
      'missing uid',
      review({ desiredAPIVersion: 'aiops.example.com/v2', objects: [] }),
      400,
      /uid is missing/,
    ],
    [
      'unknown desired version',
      review({ uid: 'u', desiredAPIVersion: 'aiops.example.com/v3', objects: [ok] }),
      200,
      /desiredAPIVersion "aiops.example.com\/v3" is not served; expected one of aiops.example.com\/v1alpha1, /,
    ],
    [
      'unknown desired version, no objects',
      review({ uid: 'u', desiredAPIVersion: 'aiops.example.com/v3', objects: [] }),
      200,
      /is not served/,
    ],
    [
      'object of another kind',
      review({ uid: 'u', desiredAPIVersion: 'aiops.example.com/v2', objects: [{ ...ok, kind: 'Pod' }] }),
      200,
      /kind must be AITask/,
    ],
    [
      'objects not a list',
      review({ uid: 'u', desiredAPIVersion: 'aiops.example.com/v2', objects: {} }),
      200,
      /must be a list/,
    ],
  ];
  for (const [name, body, code, message] of cases) {
    await t.test(name, () => {
      const out = handleReview(body, KEY);
      assert.equal(out.httpStatus, code);
      const r = out.body.response.result;
      assert.equal(r.status, 'Failure');
      assert.match('message' in r ? r.message : '', message);
      assert.equal(out.body.response.convertedObjects, undefined);
    });
  }
});

test('fuzz: 3,000 random bodies never throw and always answer a ConversionReview', () => {
  const objectish = fc.oneof(v2Task, v1Task, fc.anything(), fc.object());
  const body = fc.oneof(
    fc.string(),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          uid: fc.oneof(fc.string(), fc.integer()),
          desiredAPIVersion: fc.oneof(
            fc.constantFrom('aiops.example.com/v1', 'aiops.example.com/v2', 'x'),
            fc.string(),
          ),
          objects: fc.array(objectish, { maxLength: 4 }),
        },
        { requiredKeys: [] },
      )
      .map(review),
  );
  fc.assert(
    fc.property(body, (b) => {
      const out = handleReview(b, KEY);
      assert.equal(out.body.kind, 'ConversionReview');
      assert.ok([200, 400].includes(out.httpStatus));
    }),
    { numRuns: 3000 },
  );
});

test('property: a review is refused unless it asks for a served version, objects or not; `desired` is then `invalid`', () => {
  const served = new Set<string>(SERVED_API_VERSIONS);
  const asked = fc.oneof(
    fc.constantFrom(...SERVED_API_VERSIONS),
    fc.string({ maxLength: 300 }).filter((s) => !served.has(s)),
    fc.constantFrom(...SERVED_API_VERSIONS).map((v) => `${v} `),
    fc.nat(2000).map((n) => `aiops.example.com/v${'9'.repeat(n)}`),
  );
  fc.assert(
    fc.property(asked, fc.boolean(), (desiredAPIVersion, withObject) => {
      const objects = withObject ? [fc.sample(v2Task, { numRuns: 1, seed: 3 })[0]] : [];
      const out = handleReview(review({ uid: 'u', desiredAPIVersion, objects }), KEY);
      const r = out.body.response.result;
      if (served.has(desiredAPIVersion)) {
        assert.equal(r.status, 'Success');
        assert.equal(out.desired, desiredAPIVersion);
      } else {
        assert.equal(r.status, 'Failure');
        assert.equal(out.desired, 'invalid');
        assert.ok('message' in r && r.message.length < 300, 'the message quotes a bounded part of the value');
      }
    }),
    { numRuns: 500 },
  );
});
