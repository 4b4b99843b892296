// The advisor, in-process, against a real inference server: llama-cpp-python's OpenAI-compatible
// server on a random-weight model written at test time (test/support/llama-server.ts). What a
// stand-in cannot show: the request shape this server really accepts (json_schema refused with
// a 500 and a validation message, json_object with the schema taken), that its grammar makes a
// model of noise answer within the advice schema, its real token counts and finish reasons,
// and what the advisor sees when the process dies with a request in flight. No cluster needed;
// CI (AIOPS_REQUIRE_LLM_SERVER) fails instead of skipping when the server is missing.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { CircuitBreaker } from './policy.ts';
import { adviceSchema, checkAdvice } from './answer-schema.ts';
import {
  completionStatuses,
  llamaServerSkip,
  startLlamaServer,
  type LlamaServer,
} from '../../test/support/llama-server.ts';
import { ADVICE_CONTEXT, testAdvisor } from '../../test/support/llm-advisor.ts';
import { eventually } from '../../test/harness/wait.ts';
import type { AdvisorOptions } from './advisor.ts';
import { parseCompletion } from './protocol.ts';
import { chatRequest, initialShape } from './request-shape.ts';

const skip = llamaServerSkip();
const MODEL = 'aiops-test-random';
let server: LlamaServer;
before(async () => {
  if (skip === undefined) server = await startLlamaServer({ model: MODEL });
});
after(async () => {
  if (skip === undefined) await server.stop();
});

const advisor = (s: LlamaServer, extra: Partial<AdvisorOptions> = {}) =>
  testAdvisor({ allowlist: s.url, defaultModel: MODEL, key: '' }, { env: {}, ...extra });
const statuses = async (s: LlamaServer): Promise<number[]> =>
  completionStatuses(await readFile(s.logPath, 'utf8'));

void describe('Advisor on a real llama-cpp-python server', { skip }, () => {
  void test('json_schema refused with 500, json_object with the schema accepted and remembered; the advice fits the schema; usage counted', async () => {
    const a = advisor(server);
    const before = (await statuses(server)).length;
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(await a.advise(`ns/t${i}`, { endpoint: server.endpoint }, ADVICE_CONTEXT));
    assert.deepEqual((await statuses(server)).slice(before), [500, 200, 200, 200]);
    for (const r of results) {
      assert.equal(r.kind, 'advice', JSON.stringify(r));
      assert.equal(checkAdvice(adviceSchema(ADVICE_CONTEXT.allowedActions), r.advice), undefined);
      assert.equal(r.call?.model, MODEL);
      // A byte vocabulary: each character of the prompt is at least one token.
      assert.ok((r.call.promptTokens ?? 0) > 500, `prompt tokens ${r.call.promptTokens}`);
      const completion = r.call.completionTokens ?? 0;
      assert.ok(completion > 30 && completion <= 120, `completion tokens ${completion}`);
    }
  });

  void test('a small token limit reaches the server (max_tokens) and the cut answer is reported as cut', async () => {
    const r = await advisor(server, { maxCompletionTokens: 24 }).advise(
      'ns/cut',
      { endpoint: server.endpoint },
      ADVICE_CONTEXT,
    );
    assert.equal(r.kind, 'fallback');
    assert.equal(r.reason, 'LLMInvalidAnswer');
    assert.match(r.message, /cut at the completion-token limit \(finish_reason length\)/);
    assert.equal(r.call?.completionTokens, 24);
  });

  void test('an answer outside the schema (the server held to another one: confidence as a word): complete, and refused by the parser as not matching the schema', async () => {
    const full = adviceSchema(ADVICE_CONTEXT.allowedActions);
    const weaker = {
      ...full,
      properties: {
        ...full.properties,
        confidence: { type: 'string', enum: ['low', 'medium', 'high'] },
      },
    };
    const shape = {
      ...initialShape(400),
      tokensField: 'max_tokens' as const,
      format: 'json_object_schema' as const,
    };
    const request = chatRequest(MODEL, ADVICE_CONTEXT, shape);
    const res = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, response_format: { type: 'json_object', schema: weaker } }),
    });
    const body = await res.text();
    const choice = (
      JSON.parse(body) as { choices: { message: { content: string }; finish_reason: string }[] }
    ).choices[0];
    assert.equal(choice?.finish_reason, 'stop', 'a complete answer');
    const parsed = parseCompletion(res.status, body, ADVICE_CONTEXT.allowedActions);
    assert.equal(
      parsed.ok ? 'advice' : parsed.reason,
      'LLMInvalidAnswer',
      `answer: ${choice.message.content}`,
    );
    assert.match(
      parsed.ok ? '' : parsed.message,
      /^the answer does not match the advice schema: confidence is not a number$/,
    );
  });

  void test('the server killed with a request in flight: LLMUnreachable, then refused connections, then the breaker opens at the threshold', async () => {
    const own = await startLlamaServer({ model: MODEL });
    try {
      const a = advisor(own, { breaker: new CircuitBreaker(2, 600_000), defaultTimeoutMs: 30_000 });
      const llm = { endpoint: own.endpoint };
      assert.equal((await a.advise('ns/dead', llm, ADVICE_CONTEXT)).kind, 'advice');
      own.freeze();
      const inFlight = a.advise('ns/dead', llm, ADVICE_CONTEXT);
      await eventually('the request to wait unread in the frozen server', () =>
        own.unreadRequests() > 0 ? true : undefined,
      );
      await own.kill();
      const first = await inFlight;
      assert.equal(first.kind === 'fallback' ? first.reason : first.kind, 'LLMUnreachable');
      assert.ok(first.call !== undefined, 'the call went out and is recorded');
      const second = await a.advise('ns/dead', llm, ADVICE_CONTEXT);
      assert.equal(second.kind === 'fallback' ? second.reason : second.kind, 'LLMUnreachable');
      assert.match(second.kind === 'fallback' ? second.message : '', /ECONNREFUSED/);
      const third = await a.advise('ns/dead', llm, ADVICE_CONTEXT);
      assert.equal(third.kind === 'fallback' ? third.reason : third.kind, 'LLMCircuitOpen');
      assert.equal(third.call, undefined, 'no call while the breaker is open');
    } finally {
      await own.stop();
    }
  });
});
