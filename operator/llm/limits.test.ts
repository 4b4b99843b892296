// The advisor's limits against the local chat-completions stand-in: an API key never goes
// over plain http off loopback (refused before any byte is sent), an answer over the size
// limit fails the call, and each call that goes out is measured (model, latency, the tokens
// the server reports) for the decision record and the metrics.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { Advisor, type AdviceResult, type AdvisorOptions } from './advisor.ts';
import { ADVICE, ADVICE_CONTEXT, llmServers, testAdvisor } from '../../test/support/llm-advisor.ts';
import { countTokens, type LLMServer } from '../../test/support/llm-server.ts';

const KEY = 'sk-limits-test-2c9e';
const CTX = ADVICE_CONTEXT;

const servers = llmServers();
after(() => servers.closeAll());
/** Allow-list entries binding each started server's port, on 127.0.0.1, localhost and a host that is not loopback. */
const allowed: string[] = [];
const server: typeof servers.start = async (...args) => {
  const s = await servers.start(...args);
  const { port } = new URL(s.endpoint);
  for (const host of ['127.0.0.1', 'localhost', 'llm.insecure.test']) allowed.push(`http://${host}:${port}/`);
  return s;
};

const advisor = (extra: Partial<AdvisorOptions> = {}): Advisor =>
  testAdvisor({ allowlist: allowed.join(','), defaultModel: 'default-model', key: KEY }, extra);

const reasonOf = (r: AdviceResult): string => (r.kind === 'advice' ? 'advice' : r.reason);
const messageOf = (r: AdviceResult): string => (r.kind === 'advice' ? '' : r.message);

const prompt = (s: LLMServer, i: number): string =>
  (JSON.parse(s.requests[i]?.body ?? '{}') as { messages: { content: string }[] }).messages
    .map((m) => m.content)
    .join('');

void describe('Advisor limits', () => {
  void test('an API key goes over http to loopback (127.0.0.1, localhost) but never to another host', async () => {
    const s = await server();
    for (const endpoint of [s.endpoint, s.endpoint.replace('127.0.0.1', 'localhost')]) {
      const r = await advisor().advise('ns/t', { endpoint }, CTX);
      assert.equal(r.kind, 'advice', endpoint);
    }
    assert.equal(s.requests.length, 2);
    assert.ok(s.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`));

    const calls: v2.DecisionLLMCall[] = [];
    const outcomes: string[] = [];
    const a = advisor({ onCall: (c) => calls.push(c), onOutcome: (o) => outcomes.push(o) });
    const insecure = s.endpoint.replace('127.0.0.1', 'llm.insecure.test');
    const r = await a.advise('ns/t', { endpoint: insecure }, CTX);
    assert.equal(reasonOf(r), 'LLMInsecureEndpoint');
    assert.match(messageOf(r), /plain http to a host that is not loopback.*not contacted/);
    assert.equal(r.call, undefined, 'no call went out');
    assert.deepEqual(calls, []);
    assert.deepEqual(outcomes, ['LLMInsecureEndpoint']);
    assert.equal(s.requests.length, 2, 'nothing was sent');
  });

  void test('an answer over the size limit fails the call (LLMResponseTooLarge); within it, advice', async () => {
    const huge = await server({ oversizedBytes: 2 * 1024 * 1024 });
    const r = await advisor().advise('ns/t', { endpoint: huge.endpoint }, CTX);
    assert.equal(reasonOf(r), 'LLMResponseTooLarge');
    assert.match(messageOf(r), /more than 1048576 bytes/);
    assert.equal(r.call?.promptTokens, undefined, 'an answer not read reports no usage');

    const small = await server();
    const tight = await advisor({ maxResponseBytes: 200 }).advise('ns/t', { endpoint: small.endpoint }, CTX);
    assert.equal(reasonOf(tight), 'LLMResponseTooLarge');
    const roomy = await advisor({ maxResponseBytes: 4096 }).advise('ns/t', { endpoint: small.endpoint }, CTX);
    assert.equal(roomy.kind, 'advice');
  });

  void test('each call is measured: model, latency, and the tokens the server reports (or none)', async () => {
    const s = await server({ delayMs: 300, then: { json: ADVICE } });
    const calls: v2.DecisionLLMCall[] = [];
    const r = await advisor({ onCall: (c) => calls.push(c) }).advise(
      'ns/t',
      { endpoint: s.endpoint, model: 'gpt-x' },
      CTX,
    );
    assert.equal(r.kind, 'advice');
    assert.ok(r.call !== undefined);
    assert.equal(r.call.model, 'gpt-x');
    assert.ok(r.call.latencyMs >= 290 && r.call.latencyMs < 5000, `latency ${r.call.latencyMs} ms`);
    assert.equal(r.call.promptTokens, countTokens(prompt(s, 0)));
    assert.equal(r.call.completionTokens, countTokens(JSON.stringify(ADVICE)));
    assert.deepEqual(calls, [r.call]);

    const quiet = await server({ json: ADVICE }, { usage: false });
    const q = await advisor().advise('ns/t', { endpoint: quiet.endpoint }, CTX);
    assert.equal(q.call?.model, 'default-model');
    assert.deepEqual(Object.keys(q.call ?? {}).sort(), ['latencyMs', 'model'], 'no usage, no token counts');

    const slow = await server({ delayMs: 3000, then: { json: ADVICE } });
    const t = await advisor().advise('ns/t', { endpoint: slow.endpoint, timeoutSeconds: 1 }, CTX);
    assert.equal(reasonOf(t), 'LLMTimeout');
    assert.ok(t.call !== undefined, 'a failed call is recorded too');
    assert.equal(t.call.model, 'default-model');
    assert.ok(t.call.latencyMs >= 900, `latency ${t.call.latencyMs} ms`);

    const bad = await server({ content: 'scale up, probably' });
    const b = await advisor().advise('ns/t', { endpoint: bad.endpoint }, CTX);
    assert.equal(reasonOf(b), 'LLMInvalidAnswer');
    assert.equal(b.call?.completionTokens, countTokens('scale up, probably'), 'usage of an invalid answer');
  });
});
