// The advisor against the local chat-completions stand-in with the accept rules of each kind
// of server it meets (OpenAI with a reasoning model, an older vLLM, Ollama): the request it
// sends first, how it asks again when a field is refused by name, what it remembers per
// endpoint, and the Authorization header with and without a configured key.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Advisor, type AdvisorOptions } from './advisor.ts';
import { ADVICE, ADVICE_CONTEXT, llmServers, testAdvisor } from '../../test/support/llm-advisor.ts';
import type { LLMServer, LLMServerOptions } from '../../test/support/llm-server.ts';

const KEY = 'sk-advisor-test-5b1d';
const CTX = ADVICE_CONTEXT;

const servers = llmServers();
after(() => servers.closeAll());
/** Allow-list entries binding each started server's scheme, host and port. */
const allowed: string[] = [];
const server = async (opts: LLMServerOptions): Promise<LLMServer> => {
  const s = await servers.start({ json: ADVICE }, opts);
  allowed.push(new URL(s.endpoint).origin);
  return s;
};

const advisor = (extra: Partial<AdvisorOptions> = {}): Advisor =>
  testAdvisor({ allowlist: allowed.join(','), defaultModel: 'test-model', key: KEY }, extra);

const body = (s: LLMServer, i: number): Record<string, unknown> =>
  JSON.parse(s.requests[i]?.body ?? '{}') as Record<string, unknown>;
const ask = (a: Advisor, s: LLMServer, key = 'ns/task') =>
  a.advise(key, { endpoint: s.endpoint, model: 'test-model' }, CTX);

void describe('Advisor request shape', () => {
  void test('OpenAI (reasoning model): max_completion_tokens, no sampling parameters, Bearer key: accepted at once', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const r = await ask(advisor(), s);
    assert.equal(r.kind, 'advice');
    assert.equal(s.requests.length, 1);
    const b = body(s, 0);
    assert.equal(b['max_completion_tokens'], 200);
    assert.ok(!('max_tokens' in b) && !('temperature' in b));
    assert.deepEqual(b['response_format'], { type: 'json_object' });
    assert.equal(s.requests[0]?.headers.authorization, `Bearer ${KEY}`);
  });

  void test('OpenAI with a configured temperature it refuses: asked again without it, then remembered', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const a = advisor({ temperature: 0 });
    assert.equal((await ask(a, s)).kind, 'advice');
    assert.equal(s.requests.length, 2);
    assert.equal(body(s, 0)['temperature'], 0);
    assert.ok(!('temperature' in body(s, 1)));
    assert.equal((await ask(a, s)).kind, 'advice');
    assert.equal(s.requests.length, 3, 'the next call goes out in the accepted shape');
    assert.ok(!('temperature' in body(s, 2)));
  });

  void test('older vLLM (only max_tokens, extra fields refused): falls back to max_tokens, keeps the temperature, no key', async () => {
    const s = await server({ style: 'vllm' });
    const a = advisor({ env: {}, temperature: 0.2, maxCompletionTokens: 64 });
    const r = await ask(a, s);
    assert.equal(r.kind, 'advice');
    assert.equal(s.requests.length, 2);
    assert.equal(body(s, 0)['max_completion_tokens'], 64);
    assert.equal(body(s, 1)['max_tokens'], 64);
    assert.ok(!('max_completion_tokens' in body(s, 1)));
    assert.equal(body(s, 1)['temperature'], 0.2);
    for (const req of s.requests) assert.equal(req.headers.authorization, undefined);
    await ask(a, s, 'ns/other');
    assert.equal(s.requests.length, 3);
    assert.equal(body(s, 2)['max_tokens'], 64);
  });

  void test('Ollama (unknown fields ignored, no key): one request, no Authorization header', async () => {
    const s = await server({ style: 'ollama' });
    const r = await ask(advisor({ env: { AIOPS_LLM_API_KEY: '' } }), s);
    assert.equal(r.kind, 'advice');
    assert.equal(s.requests.length, 1);
    assert.equal(s.requests[0]?.headers.authorization, undefined);
  });

  void test('a server that wants a key and gets none answers 401: an HTTP error fallback, not a refusal to call', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const r = await ask(advisor({ env: {} }), s);
    assert.equal(r.kind, 'fallback');
    assert.equal(r.reason, 'LLMHTTPError');
    assert.equal(s.requests.length, 1);
  });

  void test('a 400 that names no field it sent is not retried', async () => {
    const s = await server({ style: 'lenient' });
    s.reply({ status: 400, message: 'context length exceeded' });
    const r = await ask(advisor(), s);
    assert.equal(r.kind === 'fallback' ? r.reason : r.kind, 'LLMHTTPError');
    assert.equal(s.requests.length, 1);
  });
});
