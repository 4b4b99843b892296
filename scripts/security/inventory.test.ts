// The input-path inventory holds every path the code opens, each with every budget set: a
// client, informer, list, watch, raw request, listener or outbound call that scan.ts finds in
// the operator's or the webhook's source must be named by an entry, every label of every series
// they register must have its closed set, every shipped alert its input; docs/security.md shows
// what inventory-doc.ts renders; every cache event handler must have its fan-out
// (inventory-fanout.ts). So a new path, label, alert or handler without budgets fails CI.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { format, resolveConfig } from 'prettier';
import { createMetrics } from '../../conversion-webhook/metrics.ts';
import { metricDocs, operatorMetricDocs } from '../../operator/metrics-doc.ts';
import { alertDefs } from '../monitoring/alerts.ts';
import { jobName } from '../monitoring/objects.ts';
import type { Budgets } from './inventory-budgets.ts';
import { INPUT_PATHS } from './inventory.ts';
import { ALERT_INPUTS, LABELS } from './inventory-series.ts';
import { inventoryMarkdown, readInventory } from './inventory-doc.ts';
import { FAN_OUTS } from './inventory-fanout.ts';
import { isScanned, scanHandlers, scanSource } from './scan.ts';

const BUDGET_NAMES: readonly (keyof Budgets)[] = ['bytes', 'count', 'concurrency', 'rate', 'time', 'reach'];

const root = join(import.meta.dirname, '..', '..');
const sources = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => isScanned(f) && existsSync(join(root, f)));
const sites = sources.flatMap((f) => scanSource(f, readFileSync(join(root, f), 'utf8')));
const handlers = sources.flatMap((f) => scanHandlers(f, readFileSync(join(root, f), 'utf8')));

test('the scan finds each kind of site in source text, and none in comments', () => {
  const text = [
    'const pods = new ResourceClient<Pod>(transport, Resources.pods);',
    'const c = new Informer<Deployment>(client, {});',
    'await this.#pods.listAll(namespace, { labelSelector });',
    'const page = await tasks.page(undefined, { limit });',
    'await client.watch(undefined, opts, onEvent);',
    "await this.#transport.request<Scale>({ method: 'PUT', path });",
    'const s = https.createServer(options, handler);',
    'const get = this.#https ? https.get : http.get;',
    'const res = await fetch(endpoint, { method: "POST" });',
    'cache.list(); // an in-memory read, not a list call',
    '// new ResourceClient(transport, Resources.nodes) in a comment',
    '/* http.createServer( in a block comment */',
  ].join('\n');
  assert.deepEqual(
    scanSource('x.ts', text).map((s) => `${s.kind} ${s.key}`),
    [
      'client x.ts: ResourceClient(Resources.pods)',
      'informer x.ts: Informer<Deployment>',
      'list x.ts: this.#pods.listAll',
      'list x.ts: tasks.page',
      'watch x.ts: client.watch',
      'request x.ts: this.#transport.request',
      'listener x.ts: https.createServer',
      'outbound x.ts: https.get',
      'outbound x.ts: http.get',
      'outbound x.ts: fetch',
    ],
  );
});

test('every client, informer, list, watch, request, listener and outbound call in the code has an inventory entry', () => {
  assert.ok(sites.length > 30, `the scan found only ${sites.length} sites: is it reading the tree?`);
  const named = new Set(INPUT_PATHS.flatMap((p) => p.sites));
  const missing = sites.filter((s) => !named.has(s.key)).map((s) => `${s.kind} ${s.key}`);
  assert.deepEqual(
    missing,
    [],
    'add these sites, with their budgets, to scripts/security/inventory-reads.ts, -listeners.ts or -outbound.ts',
  );
  const found = new Set(sites.map((s) => s.key));
  const stale = [...named].filter((k) => !found.has(k));
  assert.deepEqual(stale, [], 'these inventory sites are not in the code any more');
});

test('the handler scan finds each event of each cache registration and each refusal hook, and none in comments or bodies', () => {
  const text = [
    'taskCache.on({',
    '  add: (t) => queue.add(objectKey(t)),',
    "  update(a, b) { if (a !== b) queue.addEvent(key(b), 'x,y'); },",
    '  delete: (t) => { for (const k of same(t, { add: 1 })) queue.add(k); },',
    '});',
    'this.#cache.on({ delete: enqueue });',
    '// other.on({ add: nothing })',
    'const opts = { onRefused: (o) => enqueue(o) };',
    "emitter.on('close', done);",
  ].join('\n');
  assert.deepEqual(scanHandlers('x.ts', text), [
    'x.ts: taskCache.on add',
    'x.ts: taskCache.on update',
    'x.ts: taskCache.on delete',
    'x.ts: this.#cache.on delete',
    'x.ts: onRefused',
  ]);
});

test('every cache event handler in the code has its fan-out: the keys it may queue and whose pace they take', () => {
  assert.ok(handlers.length >= 6, `the scan found only ${handlers.length} handlers: is it reading the tree?`);
  const listed = FAN_OUTS.map((f) => f.handler);
  assert.deepEqual(
    handlers.filter((h) => !listed.includes(h)),
    [],
    'add these handlers, with the keys they queue and how they are paced, to scripts/security/inventory-fanout.ts',
  );
  assert.deepEqual(
    listed.filter((h) => !handlers.includes(h)),
    [],
    'these fan-out handlers are not in the code any more',
  );
  const ids = new Set(INPUT_PATHS.map((p) => p.id));
  for (const f of FAN_OUTS) {
    assert.equal(listed.filter((h) => h === f.handler).length, 1, `${f.handler} is listed twice`);
    assert.ok(ids.has(f.path), `${f.handler}: no input path ${f.path}`);
    assert.ok(
      f.keys.trim().length >= 4 && f.paced.trim().length >= 4,
      `${f.handler}: keys or pace not stated`,
    );
    assert.ok(f.provedBy.length > 0, `${f.handler} names no test`);
    for (const file of [...f.enforcedIn, ...f.provedBy])
      assert.ok(existsSync(join(root, file)), `${f.handler}: ${file} does not exist`);
  }
});

test('every path sets every budget, and names files that exist', () => {
  const ids = new Set<string>();
  for (const p of INPUT_PATHS) {
    assert.ok(!ids.has(p.id), `${p.id} is listed twice`);
    ids.add(p.id);
    assert.ok(p.sites.length > 0, `${p.id} names no site`);
    for (const name of BUDGET_NAMES)
      assert.ok(p.budgets[name].trim().length >= 4, `${p.id}: the ${name} budget is not set`);
    for (const f of [...p.enforcedIn, ...p.provedBy])
      assert.ok(existsSync(join(root, f)), `${p.id}: ${f} does not exist`);
    assert.ok(p.provedBy.length > 0, `${p.id} names no test`);
  }
});

test('every label of every series the operator and the webhook serve has its closed set', () => {
  const served = [...operatorMetricDocs(), ...metricDocs(createMetrics(false).registry)];
  const pairs = new Set(served.flatMap((d) => d.labels.map((l) => `${d.name}{${l}}`)));
  const listed = new Set(LABELS.flatMap((l) => l.series.map((s) => `${s}{${l.label}}`)));
  assert.deepEqual(
    [...pairs].filter((p) => !listed.has(p)),
    [],
    'add these labels, with where their values come from, to LABELS in scripts/security/inventory-series.ts',
  );
  assert.deepEqual(
    [...listed].filter((p) => !pairs.has(p)),
    [],
    'these labels are not served any more',
  );
  for (const l of LABELS) {
    assert.ok(l.values.trim().length >= 4, `${l.label}: its values are not stated`);
    for (const f of [...l.enforcedIn, ...l.provedBy])
      assert.ok(existsSync(join(root, f)), `${l.label}: ${f} does not exist`);
  }
});

test('every shipped alert says what moves it', () => {
  const shipped = alertDefs(jobName()).map((a) => a.alert);
  assert.deepEqual(
    [...ALERT_INPUTS.map((a) => a.alert)].sort(),
    [...shipped].sort(),
    'ALERT_INPUTS in scripts/security/inventory-series.ts lists exactly the shipped alerts',
  );
  for (const a of ALERT_INPUTS)
    for (const f of a.provedBy) assert.ok(existsSync(join(root, f)), `${a.alert}: ${f} does not exist`);
});

test('docs/security.md shows the inventory as inventory-doc.ts renders it', async () => {
  const path = join(root, 'docs/security.md');
  const want = await format(inventoryMarkdown(), { ...(await resolveConfig(path)), parser: 'markdown' });
  assert.equal(
    readInventory(readFileSync(path, 'utf8')),
    want.trim(),
    'docs/security.md is stale: run `npm run generate` and commit it',
  );
});
