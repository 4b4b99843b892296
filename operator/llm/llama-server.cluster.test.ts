// Integration: the operator's LLM mode against a real inference server — llama-cpp-python's
// OpenAI-compatible server on a random-weight model written at test time
// (test/support/llama-server.ts) — with the settings docs/llm.md shows, read from the page.
// The model's text is noise, so every valid answer is the server's grammar following the
// advice schema the operator sent. Needs the shared cluster and the installed server; CI
// (AIOPS_REQUIRE_LLM_SERVER) fails instead of skipping when the server is missing.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { freshNamespace } from '../../test/support/cluster.ts';
import {
  completionStatuses,
  documentedSettings,
  llamaServerSkip,
  startLlamaServer,
  type LlamaServer,
} from '../../test/support/llama-server.ts';
import { eventually } from '../../test/support/operator.ts';
import { aitask, clients, operatorFor, startMetrics, type Metrics } from '../../test/support/remediation.ts';
import { deployment } from '../../test/support/workloads.ts';

const skip = llamaServerSkip();

let metrics: Metrics;
const doc = skip === undefined ? documentedSettings() : undefined;
const settings = () => {
  if (doc === undefined) throw new Error('no settings: the suite is skipped');
  return doc;
};
before(async () => {
  if (skip !== undefined) return;
  metrics = await startMetrics();
});
after(async () => {
  if (skip !== undefined) return;
  await metrics.stop();
});

const portOf = (s: LlamaServer): number => Number(new URL(s.url).port);

/** The outcomes of a call that went out and failed: what the circuit breaker counts. */
const CALL_FAILURES = [
  'LLMTimeout',
  'LLMUnreachable',
  'LLMHTTPError',
  'LLMResponseTooLarge',
  'LLMInvalidAnswer',
  'LLMActionNotAllowed',
] as const;

/** A server of this test's own (its log counts this test's requests only), stopped when it ends. */
async function serverFor(t: { after: (fn: () => Promise<void>) => void }): Promise<LlamaServer> {
  const s = await startLlamaServer({ model: settings().model, nCtx: settings().nCtx });
  t.after(() => s.stop());
  return s;
}

/** A breaching ScaleUp AITask in LLM mode, decided with docs/llm.md's settings for `server`. */
function llmTask(ns: string, server: LlamaServer): v2.AITask {
  return aitask(
    'web',
    'web',
    ns,
    { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 0, maxAttempts: 10 },
    { decision: settings().decision(portOf(server)) },
  );
}

async function breaching(ns: string, server: LlamaServer): Promise<void> {
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 1));
  await metrics.set(ns, 5);
  await c.tasks.create(ns, llmTask(ns, server));
}

const llmCondition = async (ns: string) =>
  findCondition((await (await clients()).tasks.get(ns, 'web')).status?.conditions, 'LLMAvailable');

describe('LLM mode on a real llama.cpp server', { concurrency: true, skip }, () => {
  test('a breach is decided with the advice the server produced; status and /metrics record the call; json_schema refused with 500, json_object with the schema accepted and remembered', async (t) => {
    const ns = await freshNamespace('llama', (fn) => t.after(fn));
    const c = await clients();
    const server = await serverFor(t);
    await breaching(ns, server);
    const op = await operatorFor(ns, metrics.prometheus.url, t, settings().operatorFlags(portOf(server)));
    const decided = await eventually(
      'a decision by the LLM',
      async () => {
        const o = await c.tasks.get(ns, 'web');
        const d = o.status?.lastDecision ?? o.status?.pendingDecision;
        return d?.source === 'llm' && d.llm !== undefined ? { o, d, llm: d.llm } : undefined;
      },
      90_000,
    );
    assert.equal(decided.llm.model, settings().model, 'the documented default model');
    assert.ok(decided.llm.latencyMs > 0, `latency ${decided.llm.latencyMs} ms`);
    // A byte vocabulary: the prompt (system text, context, chat template) is ~1,000 tokens.
    assert.ok((decided.llm.promptTokens ?? 0) > 500, `prompt tokens ${decided.llm.promptTokens}`);
    const completion = decided.llm.completionTokens ?? 0;
    assert.ok(completion > 30 && completion <= 200, `completion tokens ${completion}`);
    assert.ok(['ScaleUp', 'Noop'].includes(decided.d.action), decided.d.action);
    const cond = findCondition(decided.o.status?.conditions, 'LLMAvailable');
    assert.equal(cond?.status, 'True');
    assert.equal(cond.reason, 'LLMAdvice');
    assert.match(cond.message, /^LLM advice (ScaleUp|Noop) \(confidence (0|0\.\d|1)\): [ -~]{1,60}$/);

    const model = { model: settings().model };
    assert.ok((await op.metric('aiops_llm_calls_total', { outcome: 'advice' })) >= 1);
    assert.ok((await op.metric('aiops_llm_call_duration_seconds_count', model)) >= 1);
    assert.ok(
      (await op.metric('aiops_llm_tokens_total', { ...model, kind: 'prompt' })) >=
        (decided.llm.promptTokens ?? 1),
    );
    assert.ok((await op.metric('aiops_llm_tokens_total', { ...model, kind: 'completion' })) >= completion);

    // The next evaluation (10 s later) goes out in the shape this server accepted.
    const statuses = await eventually(
      'a second call',
      async () => {
        const s = completionStatuses(await readFile(server.logPath, 'utf8'));
        return s.filter((x) => x === 200).length >= 2 ? s : undefined;
      },
      60_000,
    );
    assert.equal(statuses[0], 500, 'json_schema: refused with a 500');
    assert.equal(statuses.filter((x) => x === 500).length, 1, 'asked once in that shape, then remembered');
  });

  test('an answer cut at the completion-token limit (finish_reason length) falls back to the rules with a condition saying so', async (t) => {
    const ns = await freshNamespace('llama-cut', (fn) => t.after(fn));
    const c = await clients();
    const server = await serverFor(t);
    await breaching(ns, server);
    const flags = settings()
      .operatorFlags(portOf(server))
      .map((f) => (f.startsWith('--llm-max-completion-tokens=') ? '--llm-max-completion-tokens=24' : f));
    await operatorFor(ns, metrics.prometheus.url, t, flags);
    const o = await eventually(
      'LLMInvalidAnswer',
      async () => {
        const o = await c.tasks.get(ns, 'web');
        return findCondition(o.status?.conditions, 'LLMAvailable')?.reason === 'LLMInvalidAnswer'
          ? o
          : undefined;
      },
      90_000,
    );
    const cond = findCondition(o.status?.conditions, 'LLMAvailable');
    assert.equal(cond?.status, 'False');
    assert.equal(
      cond.message,
      'the answer was cut at the completion-token limit (finish_reason length); raise --llm-max-completion-tokens; the rules decide',
    );
    const d = o.status?.lastDecision ?? o.status?.pendingDecision;
    assert.equal(d?.source, 'rules');
    assert.equal(d.llm?.completionTokens, 24, 'the server stopped at the limit it was sent');
    await eventually('the rules to scale up', async () =>
      ((await c.deployments.get(ns, 'web')).spec?.replicas ?? 0) >= 2 ? true : undefined,
    );
  });

  test('the server killed mid-call: that call fails (LLMUnreachable), the breaker opens at the threshold and no call goes out while it is open; the rules keep acting', async (t) => {
    const ns = await freshNamespace('llama-dead', (fn) => t.after(fn));
    const c = await clients();
    const own = await serverFor(t);
    await breaching(ns, own);
    const op = await operatorFor(ns, metrics.prometheus.url, t, [
      ...settings().operatorFlags(portOf(own)),
      '--llm-failure-threshold=2',
      '--llm-circuit-cooloff=10m',
    ]);
    await eventually(
      'advice from the live server',
      async () => ((await llmCondition(ns))?.reason === 'LLMAdvice' ? true : undefined),
      90_000,
    );
    /** Failed calls so far, by outcome (every outcome but advice and a refusal to call counts toward the breaker). */
    const failures = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      for (const outcome of CALL_FAILURES)
        out[outcome] = await op.metric('aiops_llm_calls_total', { outcome });
      return out;
    };
    const total = (f: Record<string, number>): number => Object.values(f).reduce((a, b) => a + b, 0);
    const was = await failures();
    // The next evaluation's call (10 s on) reaches the frozen server and waits there unread.
    own.freeze();
    await eventually(
      'a call in flight to the frozen server',
      () => (own.unreadRequests() > 0 ? true : undefined),
      90_000,
      50,
    );
    await own.kill();
    const open = await eventually(
      'LLMCircuitOpen',
      async () => {
        const o = await c.tasks.get(ns, 'web');
        return findCondition(o.status?.conditions, 'LLMAvailable')?.reason === 'LLMCircuitOpen'
          ? o
          : undefined;
      },
      90_000,
    );
    const now = await failures();
    const unreachable = (now['LLMUnreachable'] ?? 0) - (was['LLMUnreachable'] ?? 0);
    // Two consecutive failures open it: the killed call and the next are both unreachable, unless
    // a call just before the freeze had already failed (a timeout on a loaded machine), which
    // leaves one to go. Either way no more than the threshold went out, and one was the kill's.
    const spent = total(now) - total(was);
    assert.ok(
      unreachable >= 1 && spent <= 2,
      `at most the threshold of failed calls, the killed one among them: before ${JSON.stringify(was)}, after ${JSON.stringify(now)}`,
    );
    assert.equal(open.status?.lastDecision?.source ?? open.status?.pendingDecision?.source, 'rules');
    const replicas = (await c.deployments.get(ns, 'web')).spec?.replicas ?? 0;
    await eventually('the rules to act again', async () =>
      ((await c.deployments.get(ns, 'web')).spec?.replicas ?? 0) > replicas ? true : undefined,
    );
    assert.equal(total(await failures()), total(now), 'no call went out while the breaker is open');
  });
});
