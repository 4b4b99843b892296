// Attack: grow the metric series of the operator and its hosted webhook with names the
// attacker picks. Every series the operator serves (its /metrics, over HTTPS with the
// scraper's token, carries the webhook's too) is listed by family and label values before and
// after two rounds of hostile input, each with values never seen before: ConversionReviews
// sent straight to the webhook asking for made-up versions (objects or none, some 64 KiB
// long), and mallory's AITasks with made-up names, target namespaces and kinds. No label value
// ever carries what the attacker wrote, and the second round adds no series at all: every
// label comes from a closed set (served versions, fixed reasons, codes and results).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { httpsCall } from '../support/https-call.ts';
import { eventually } from '../support/operator.ts';
import { loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** The marker every hostile value carries, so a label holding one is found. */
const MARK = 'hostile';

/** Every series of the operator's /metrics: `family{label="value",…}` per line, sorted; and the text. */
async function seriesNow(): Promise<{ series: Set<string>; values: string[] }> {
  const res = await httpsCall(stage.operator.metricsPort, '/metrics', {
    ca: stage.scraper.ca,
    headers: { Authorization: `Bearer ${stage.scraper.token}` },
  });
  assert.equal(res.status, 200, res.text.slice(0, 200));
  const series = new Set<string>();
  const values: string[] = [];
  for (const line of res.text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? \S+$/.exec(line);
    assert.ok(m, `a sample line: ${line.slice(0, 200)}`);
    const labels = [...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => {
      values.push(v ?? '');
      return `${k}=${v}`;
    });
    series.add(`${m[1]}{${labels.sort().join(',')}}`);
  }
  return { series, values };
}

/**
 * Series that appear on their own as the process runs, whatever anyone sends, with labels from
 * a closed set the runtime fixes: the kinds of V8's garbage collections (prom-client adds a
 * kind's series at its first collection of that kind).
 */
const RUNTIME_CLOSED =
  /^nodejs_gc_duration_seconds_(bucket|sum|count)\{kind=(minor|major|incremental|weakcb)(,le=[^,}]+)?\}$/;

/** Sum of `name`'s samples on the operator's /metrics. */
const metric = (name: string): Promise<number> => stage.operator.metric(name);

const hostile = (): string => `${MARK}-${randomBytes(6).toString('hex')}`;

/** One round: `n` hostile reviews to the webhook, 4 hostile AITasks by mallory; resolves once all are answered and observed. */
async function round(n: number): Promise<void> {
  const before = await metric('aiops_conversion_requests_total');
  for (let i = 0; i < n; i++) {
    const desired = i % 10 === 0 ? `${hostile()}/${'v'.repeat(64 * 1024)}` : `aiops.example.com/${hostile()}`;
    const objects =
      i % 2 === 0
        ? []
        : [
            {
              apiVersion: `aiops.example.com/${hostile()}`,
              kind: 'AITask',
              metadata: { name: hostile(), namespace: hostile() },
              spec: {},
            },
          ];
    const res = await httpsCall(stage.webhook.port, '/convert', {
      ca: stage.webhook.ca,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: hostile(), desiredAPIVersion: desired, objects },
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.text, /"status":"Failure"/, 'an unserved desired version is refused, objects or not');
  }
  await eventually('every hostile review counted', async () =>
    (await metric('aiops_conversion_requests_total')) >= before + n ? true : undefined,
  );
  const names: string[] = [];
  for (let i = 0; i < 4; i++) {
    const name = hostile();
    names.push(name);
    const task = loadTask(name, { action: 'Noop' });
    await stage.mallory.tasks.create(stage.mallory.namespace, {
      ...task,
      spec: {
        ...task.spec,
        target:
          i % 2 === 0
            ? { kind: 'Deployment', name: hostile() }
            : { kind: 'Deployment', name, namespace: hostile() },
      },
    });
  }
  await eventually('every hostile task observed', async () => {
    for (const name of names) {
      const t = await stage.mallory.tasks.get(stage.mallory.namespace, name);
      if (t.status?.observedGeneration !== t.metadata.generation) return undefined;
    }
    return true;
  });
}

test('hostile versions, names and namespaces add no series: every label is from a closed set', async () => {
  const start = await seriesNow();
  await round(40);
  const first = await seriesNow();
  await round(40);
  const second = await seriesNow();
  for (const { values } of [first, second]) {
    const leaked = values.filter((v) => v.includes(MARK));
    assert.deepEqual(leaked.slice(0, 3), [], `${leaked.length} label values carry attacker input`);
  }
  const added = [...second.series].filter((s) => !first.series.has(s) && !RUNTIME_CLOSED.test(s));
  assert.deepEqual(added, [], 'a second round of new hostile values adds no series');
  assert.ok(
    second.series.size < start.series.size + 100,
    `${start.series.size} series at start, ${second.series.size} after`,
  );
  await undisturbed();
});
