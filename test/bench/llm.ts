// Benchmark section `llm` of `npm run bench`: what asking an LLM adds to a decision. The
// advisor (operator/llm/advisor.ts, as the operator runs it) against the real llama-cpp-python
// server on the tests' random-weight model (test/support/llama-server.ts, docs/llm.md's
// settings): latency and prompt/completion tokens per decision, after one warm-up call that
// negotiates the request shape; next to the rules alone (operator/decision/decide.ts) deciding
// the same breach, in the same run. The model is tiny (2 layers, n_embd 64) and its vocabulary
// byte-level, so the latency is the server's fixed cost and the token counts are those of a
// byte tokenizer (one per character); a real model adds its own compute per token.

import type * as v2 from '../../api/schema/v2.ts';
import { Advisor } from '../../operator/llm/advisor.ts';
import { CallBudget, CircuitBreaker, parseAllowlist } from '../../operator/llm/policy.ts';
import { decide } from '../../operator/decision/decide.ts';
import { ADVICE_CONTEXT } from '../support/llm-advisor.ts';
import { documentedSettings, llamaServerMissing, startLlamaServer } from '../support/llama-server.ts';
import { median, ms, percentile, printTable, ratio } from './stats.ts';

/** Advisor calls measured after the warm-up. */
const CALLS = 20;
/** Rules-only decisions measured (each is microseconds). */
const RULES = 20_000;

const TASK: Pick<v2.AITask, 'metadata' | 'spec' | 'status'> = {
  metadata: { name: 'web', namespace: 'bench', generation: 1 },
  spec: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 1 },
    remediation: { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 0 },
    decision: { mode: 'LLM', llm: { endpoint: 'http://127.0.0.1/v1/chat/completions' } },
  },
};

/** Runs the section; prints why it did not when the server is not installed. */
export async function bench(): Promise<void> {
  const missing = llamaServerMissing();
  if (missing !== undefined) {
    process.stdout.write(`\n## LLM advisor vs rules alone\nnot measured: ${missing}\n`);
    return;
  }
  const doc = documentedSettings();
  const server = await startLlamaServer({ model: doc.model, nCtx: doc.nCtx });
  try {
    const advisor = new Advisor({
      allowlist: parseAllowlist(server.url),
      budget: new CallBudget(1000, 1000),
      breaker: new CircuitBreaker(3, 60_000),
      defaultModel: doc.model,
      env: {},
      defaultTimeoutMs: 60_000,
    });
    const llm = { endpoint: server.endpoint };
    await advisor.advise('bench/warm-up', llm, ADVICE_CONTEXT);
    const latency: number[] = [];
    const prompt: number[] = [];
    const completion: number[] = [];
    let advice = 0;
    for (let i = 0; i < CALLS; i++) {
      const r = await advisor.advise(`bench/web-${i}`, llm, ADVICE_CONTEXT);
      if (r.kind === 'advice') advice++;
      if (r.call === undefined) continue;
      latency.push(r.call.latencyMs);
      prompt.push(r.call.promptTokens ?? 0);
      completion.push(r.call.completionTokens ?? 0);
    }
    const rules: number[] = [];
    const now = Date.now();
    const batch = 1000;
    for (let i = 0; i < RULES / batch; i++) {
      const t0 = performance.now();
      for (let j = 0; j < batch; j++) decide(TASK, { found: true, replicas: 2 }, { ok: true, value: 5 }, now);
      rules.push((performance.now() - t0) / batch);
    }
    const mean = (xs: readonly number[]): string =>
      (xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)).toFixed(0);
    printTable(
      `LLM advisor vs rules alone (${CALLS} calls to llama-cpp-python, random 2-layer model, byte vocabulary)`,
      ['decision', 'p50', 'p99', 'prompt tokens', 'completion tokens', 'advice'],
      [
        [
          'rules alone (decide)',
          `${(median(rules) * 1000).toFixed(2)} µs`,
          `${(percentile(rules, 99) * 1000).toFixed(2)} µs`,
          '-',
          '-',
          '-',
        ],
        [
          'rules + LLM advice',
          ms(median(latency)),
          ms(percentile(latency, 99)),
          mean(prompt),
          mean(completion),
          `${advice}/${CALLS}`,
        ],
        ['LLM / rules (p50)', ratio(median(latency), median(rules)), '', '', '', ''],
      ],
    );
  } finally {
    await server.stop();
  }
}
