// The informer's refusals, on a scripted list and watch: an object `admit` turns away, one
// over maxObjectCharge, and one that would take its namespace's share or the whole cache past
// its share of the heap charge are not cached, counted by reason, and remembered by key (what an AITask's
// status says of its target) until the object is cached, deleted, or gone from a relist; the
// charge follows what is cached, so room freed by a delete takes the next change.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { List, ResourceClient, WatchEvent } from '../../lib/kube/resources.ts';
import type { ObjectMeta } from '../../api/schema/common.ts';
import { eventually } from '../../test/harness/wait.ts';
import type { Refusal } from './cache-budget.ts';
import { entryCharge, Informer } from './informer.ts';

interface Obj {
  metadata: ObjectMeta;
  fill?: string;
  bad?: boolean;
}

const obj = (namespace: string, name: string, rv: string, fill = 0, bad = false): Obj => ({
  metadata: { namespace, name, resourceVersion: rv },
  fill: 'x'.repeat(fill),
  ...(bad ? { bad } : {}),
});

/** A client whose list answers `listed` (one page) and whose watch hands its callback to the test. */
function scripted(listed: () => Obj[]): {
  client: ResourceClient<Obj>;
  send: (ev: WatchEvent<Obj>) => void;
  watching: () => boolean;
} {
  let onEvent: ((ev: WatchEvent<Obj>) => void) | undefined;
  const client = {
    page: (): Promise<List<Obj>> => Promise.resolve({ items: listed(), metadata: { resourceVersion: '1' } }),
    watch: (
      _ns: string | undefined,
      _opts: unknown,
      cb: (ev: WatchEvent<Obj>) => void,
      signal?: AbortSignal,
    ): Promise<void> =>
      new Promise((resolve) => {
        onEvent = cb;
        signal?.addEventListener('abort', () => resolve());
      }),
  };
  return {
    client: client as unknown as ResourceClient<Obj>,
    send: (ev) => onEvent?.(ev),
    watching: () => onEvent !== undefined,
  };
}

test('objects past the namespace share, the cache budget, the size bound or admit are refused, counted and remembered', async () => {
  const one = entryCharge(obj('a', 'a1', '1', 100), {});
  const listed = [
    obj('a', 'a1', '1', 100),
    obj('a', 'a2', '1', 100),
    obj('a', 'a3', '1', 100),
    obj('b', 'b1', '1', 100),
    obj('c', 'c1', '1', 100),
    obj('c', 'huge', '1', 10_000),
    obj('c', 'odd', '1', 0, true),
  ];
  const { client, send, watching } = scripted(() => listed);
  const refused: [string, Refusal][] = [];
  const informer = new Informer<Obj>(client, {
    transform: (o) => o,
    admit: (o) => (o.bad === true ? 'it is odd' : undefined),
    maxObjectCharge: 2000,
    maxNamespaceCharge: 2 * one,
    maxCacheCharge: 3 * one,
    onRefused: (o, _bytes, r) => refused.push([o.metadata.name ?? '', r]),
  });
  await informer.start();
  await eventually('the watch', () => (watching() ? true : undefined));
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ['a1', 'a2', 'b1'],
  );
  assert.equal(informer.bytes, 3 * one);
  assert.deepEqual(
    refused.map(([name, r]) => [name, r.reason]),
    [
      ['a3', 'CacheFull'],
      ['c1', 'CacheFull'],
      ['huge', 'TooLarge'],
      ['odd', 'NotAdmitted'],
    ],
  );
  assert.match(informer.refusal('a/a3')?.message ?? '', /namespace a/);
  assert.match(informer.refusal('c/c1')?.message ?? '', /full/);
  assert.equal(informer.refusal('c/odd')?.message, 'it is odd');
  assert.deepEqual(informer.refusedBy, { TooLarge: 1, NotAdmitted: 1, CacheFull: 2 });
  assert.equal(informer.refused, 4);

  // A delete frees a2's room: a3's next change is cached and no longer remembered as refused.
  send({ type: 'DELETED', object: obj('a', 'a2', '2', 100) });
  send({ type: 'MODIFIED', object: obj('a', 'a3', '3', 100) });
  assert.ok(informer.get('a/a3') !== undefined);
  assert.equal(informer.refusal('a/a3'), undefined);
  // An object cached that grows past the share is dropped and refused.
  send({ type: 'MODIFIED', object: obj('a', 'a1', '4', 600) });
  assert.equal(informer.get('a/a1'), undefined);
  assert.equal(informer.refusal('a/a1')?.reason, 'CacheFull');
  // Deleting a refused object forgets its refusal.
  send({ type: 'DELETED', object: obj('c', 'odd', '5') });
  assert.equal(informer.refusal('c/odd'), undefined);
  assert.equal(informer.bytes, 2 * one);
  await informer.stop();
});
