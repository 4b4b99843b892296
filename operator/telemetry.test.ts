import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  createTelemetry,
  MAX_MODEL_LABEL_CHARS,
  MAX_MODEL_LABELS,
  MODEL_OVERFLOW,
  modelLabel,
} from './telemetry.ts';

test('modelLabel keeps the first MAX_MODEL_LABELS models and counts the rest under one label', () => {
  const seen = new Set<string>();
  const labels = Array.from({ length: MAX_MODEL_LABELS + 5 }, (_, i) => modelLabel(`m${i}`, seen));
  assert.deepEqual(
    labels.slice(0, MAX_MODEL_LABELS),
    Array.from({ length: MAX_MODEL_LABELS }, (_, i) => `m${i}`),
  );
  assert.deepEqual(labels.slice(MAX_MODEL_LABELS), Array(5).fill(MODEL_OVERFLOW));
  assert.equal(modelLabel('m3', seen), 'm3', 'a model seen before keeps its label');
  assert.equal(seen.size, MAX_MODEL_LABELS);
});

test('llmCall records latency by model and the tokens the server reported', async () => {
  const t = createTelemetry();
  t.llmCall({ model: 'gpt-x', latencyMs: 1500, promptTokens: 100, completionTokens: 20 });
  t.llmCall({ model: 'gpt-x', latencyMs: 40 });
  const text = await t.registry.metrics();
  assert.match(text, /aiops_llm_call_duration_seconds_count\{model="gpt-x"\} 2/);
  assert.match(text, /aiops_llm_call_duration_seconds_sum\{model="gpt-x"\} 1\.54/);
  assert.match(text, /aiops_llm_call_duration_seconds_bucket\{le="0\.05",model="gpt-x"\} 1/);
  assert.match(text, /aiops_llm_tokens_total\{model="gpt-x",kind="prompt"\} 100/);
  assert.match(text, /aiops_llm_tokens_total\{model="gpt-x",kind="completion"\} 20/);
});

test('property: whatever models the specs name, the model label takes at most MAX_MODEL_LABELS + 1 values, none longer than MAX_MODEL_LABEL_CHARS', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 300 }), { maxLength: 200 }), (models) => {
      const seen = new Set<string>();
      const labels = new Set(models.map((m) => modelLabel(m, seen)));
      assert.ok(labels.size <= MAX_MODEL_LABELS + 1);
      for (const l of labels) assert.ok(l.length <= MAX_MODEL_LABEL_CHARS);
    }),
  );
});
