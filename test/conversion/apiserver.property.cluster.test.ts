// Conversion property tests through the real apiserver and the real webhook: a few hundred
// generated AITasks per version (test/support/arbitraries.ts, fixed seed) are created at
// that version — spec with the create, status through the status subresource, as clients
// must — and read back with one LIST at every served version. Each read must equal what the
// pure conversion functions of api/conversion predict for the apiserver's steps (defaulting
// at the request's version, conversion to the v2 storage version, the status subresource
// keeping the stored spec), and reading back at the creating version must give what was
// created, modulo the apiserver's defaults. The predictions sign the stash with a key of
// their own, so the stash's MAC annotation (the webhook's key, the stored uid) is left out
// of the comparison; a MAC the webhook could not verify would lose the stash and show.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { aitaskResource } from '../../api/aitask-client.ts';
import { convert, type LooseAITask } from '../../api/conversion/convert.ts';
import { objectSchema, VERSIONS, type VersionName } from '../../api/crd.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../../api/install.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { GROUP } from '../../api/schema/common.ts';
import { v1alpha1Task, v1Task, v2Task } from '../support/arbitraries.ts';
import { freshNamespace, testTransport } from '../support/cluster.ts';
import { withDefaults } from '../support/schema-walk.ts';

/** Objects created per version; each is read back at all three, so this many per version pair. */
const PER_VERSION = 200;
/** fast-check seed of the samples (the creating version's index is added); printed on failure. */
const SEED = 1_412_026;
/** The predictions' stash key (not the webhook's). */
const opts = { key: Buffer.alloc(32, 5) };
/** Requests in flight at once while creating. */
const CONCURRENCY = 8;

const ARBITRARIES: Record<VersionName, fc.Arbitrary<LooseAITask>> = {
  v1alpha1: v1alpha1Task,
  v1: v1Task,
  v2: v2Task,
};

const apiVersion = (v: VersionName): string => `${GROUP}/${v}`;

async function clientAt(v: VersionName): Promise<ResourceClient<LooseAITask>> {
  return new ResourceClient<LooseAITask>(await testTransport(), aitaskResource(v));
}

/** Runs `fn` over `items`, `limit` at a time. */
async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** What a request at its own version becomes after the apiserver's structural defaulting. */
function defaulted(o: LooseAITask, v: VersionName): LooseAITask {
  return withDefaults(objectSchema(v), o) as LooseAITask;
}

/** The object the apiserver stores (at v2) after the create and the status write at `v`. */
function predictStored(
  created: LooseAITask,
  status: Record<string, unknown> | undefined,
  v: VersionName,
): LooseAITask {
  const stored = convert(defaulted(created, v), apiVersion('v2'), opts);
  if (status === undefined) return stored;
  // The client writes status on the object as read at v; the apiserver converts it to v2 and
  // keeps the stored spec, taking the status and the annotations (the conversion stash, which
  // holds what v cannot say in v2) from the converted object.
  const written = convert(
    defaulted({ ...convert(stored, apiVersion(v), opts), status }, v),
    apiVersion('v2'),
    opts,
  );
  return { ...written, spec: stored.spec };
}

/**
 * The parts conversion may change: spec, status and the annotations, the conversion stash
 * parsed with its entries in path order (the apiserver stores objects with their keys
 * sorted, so the stash a conversion writes lists the same entries in another order).
 */
function comparable(o: LooseAITask): Record<string, unknown> {
  const stash = o.metadata.annotations?.[CONVERSION_ANNOTATION];
  const entries =
    stash === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(JSON.parse(stash) as Record<string, { p: unknown }[]>).map(([v, list]) => [
            v,
            [...list].sort((a, b) => JSON.stringify(a.p).localeCompare(JSON.stringify(b.p))),
          ]),
        );
  return { spec: o.spec, status: o.status, annotations: ownAnnotations(o), stash: entries };
}

/** Annotations other than the conversion stash and its MAC. */
function ownAnnotations(o: LooseAITask): Record<string, string> {
  const a = { ...o.metadata.annotations };
  Reflect.deleteProperty(a, CONVERSION_ANNOTATION);
  Reflect.deleteProperty(a, CONVERSION_MAC_ANNOTATION);
  return a;
}

VERSIONS.forEach((from, index) => {
  test(`${PER_VERSION} generated AITasks created at ${from} read back losslessly at every version`, async (t) => {
    const seed = SEED + index;
    const ns = await freshNamespace(`conv-prop-${from}`, t.after.bind(t));
    const sample = fc.sample(ARBITRARIES[from], { seed, numRuns: PER_VERSION });
    if (from === 'v2')
      assert.ok(
        sample.some((o) => {
          const target = (o.spec['target'] ?? {}) as { apiVersion?: string; kind?: string };
          return target.apiVersion !== undefined && target.apiVersion !== 'apps/v1';
        }),
        'the sample names targets of custom kinds with their apiVersion',
      );
    const client = await clientAt(from);
    const requests = sample.map((o, i): LooseAITask => {
      const { labels, annotations } = o.metadata;
      return {
        apiVersion: apiVersion(from),
        kind: 'AITask',
        metadata: {
          name: `o-${i}`,
          ...(labels !== undefined ? { labels } : {}),
          ...(annotations !== undefined ? { annotations } : {}),
        },
        spec: o.spec,
      };
    });
    await pool(requests, CONCURRENCY, async (req, i) => {
      const status = sample[i]?.status;
      try {
        const created = await client.create(ns, req);
        if (status !== undefined)
          await client.replace(ns, req.metadata.name ?? '', { ...created, status }, 'status');
      } catch (err) {
        throw new Error(
          `object ${i} (fc.sample seed ${seed}) was refused at ${from}: ${(err as Error).message}\n  ${JSON.stringify({ ...req, status })}`,
          { cause: err },
        );
      }
    });

    const reads = new Map<VersionName, Map<string, LooseAITask>>();
    for (const v of VERSIONS) {
      const list = await (await clientAt(v)).listAll(ns);
      reads.set(v, new Map(list.items.map((o) => [o.metadata.name ?? '', o])));
    }

    const failures: string[] = [];
    const fail = (i: number, what: string, got: unknown, want: unknown): void => {
      if (failures.length < 5)
        failures.push(
          `object ${i} (created at ${from}) ${what}:\n  got  ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}\n  generated ${JSON.stringify(sample[i])}`,
        );
      else if (failures.length === 5) failures.push('…');
    };
    requests.forEach((req, i) => {
      const name = req.metadata.name ?? '';
      const stored = predictStored(req, sample[i]?.status, from);
      for (const to of VERSIONS) {
        const got = reads.get(to)?.get(name);
        if (got === undefined) {
          fail(i, `missing from the LIST at ${to}`, undefined, name);
          continue;
        }
        assert.equal(got.apiVersion, apiVersion(to));
        const want = comparable(convert(stored, apiVersion(to), opts));
        if (!isDeepStrictEqual(comparable(got), want)) fail(i, `read at ${to}`, comparable(got), want);
      }
      const back = reads.get(from)?.get(name);
      if (back === undefined) return;
      const created = defaulted({ ...req, ...(sample[i]?.status ? { status: sample[i].status } : {}) }, from);
      const roundTrip = { spec: back.spec, status: back.status, annotations: ownAnnotations(back) };
      const original = { spec: created.spec, status: created.status, annotations: ownAnnotations(created) };
      if (!isDeepStrictEqual(roundTrip, original)) fail(i, `round trip back to ${from}`, roundTrip, original);
    });
    assert.deepEqual(
      failures,
      [],
      `conversion through the apiserver is not lossless (fc.sample seed ${seed}, ${PER_VERSION} objects):\n${failures.join('\n')}`,
    );
  });
});
