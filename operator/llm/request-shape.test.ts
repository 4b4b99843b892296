// The advisor against the local chat-completions stand-in with the accept rules of each kind
// of server it meets (OpenAI with a reasoning model, an older vLLM, Ollama): the request it
// sends first, how it asks again when a field is refused by name, what it remembers per
// endpoint, model and namespace and for how long, and the Authorization header with and
// without a configured key.

import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, describe, test } from 'node:test';
import { Advisor, type AdvisorOptions } from './advisor.ts';
import { adviceSchema } from './answer-schema.ts';
import { breakerKey } from './policy.ts';
import {
  adjustShape,
  initialShape,
  SHAPE_TTL_MS,
  ShapeMemory,
  type AnswerFormat,
  type RequestShape,
} from './request-shape.ts';
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

void test('adjustShape: which refusal changes what, table', () => {
  const start = initialShape(200, 0);
  const err = (message: string, param: string | null = null): string =>
    JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } });
  const cases: [string, RequestShape, number, string, RequestShape | undefined][] = [
    [
      'OpenAI reasoning: max_tokens refused (names both)',
      start,
      400,
      err(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        'max_tokens',
      ),
      { ...start, tokensField: 'max_completion_tokens' },
    ],
    [
      'older vLLM: max_completion_tokens forbidden',
      start,
      400,
      err("[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens')}]"),
      { ...start, tokensField: 'max_tokens' },
    ],
    [
      'temperature refused',
      { ...start, tokensField: 'max_completion_tokens' },
      400,
      err("Unsupported value: 'temperature' does not support 0", 'temperature'),
      { maxCompletionTokens: 200, tokensField: 'max_completion_tokens', format: 'json_schema' },
    ],
    [
      'llama-cpp-python 0.3.36: json_schema is a 500 (its body, verbatim)',
      start,
      500,
      JSON.stringify({
        error: {
          message:
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions",
          type: 'internal_server_error',
          param: null,
          code: null,
        },
      }),
      { ...start, format: 'json_object_schema' },
    ],
    [
      'schema inside json_object refused (FastAPI detail)',
      { ...start, format: 'json_object_schema' },
      422,
      JSON.stringify({
        detail: [{ loc: ['body', 'response_format', 'schema'], msg: 'Extra inputs are not permitted' }],
      }),
      { ...start, format: 'json_object' },
    ],
    [
      'response_format refused',
      { ...start, format: 'json_object' },
      400,
      'unknown field response_format',
      { ...start, format: 'none' },
    ],
    ['nothing left to drop', { ...start, format: 'none' }, 400, err('response_format'), undefined],
    ['a 500 naming nothing', start, 500, err('CUDA out of memory'), undefined],
    [
      'a 500 naming the token field is not a refusal',
      start,
      500,
      err('max_tokens exceeds context'),
      undefined,
    ],
    ['a 429', start, 429, err('response_format'), undefined],
  ];
  for (const [name, shape, status, text, want] of cases) {
    assert.deepEqual(adjustShape(status, text, shape), want, name);
  }
});

void test('ShapeMemory: what a key learned, for how long, and what other keys get, table', () => {
  const initial = initialShape(200);
  const lowered: RequestShape = { ...initial, format: 'none' };
  const tokens: RequestShape = { ...initial, tokensField: 'max_tokens' };
  const a = breakerKey('http://llm/v1/chat/completions', 'm', 'alice');
  const m = breakerKey('http://llm/v1/chat/completions', 'm', 'mallory');
  const other = breakerKey('http://llm/v1/chat/completions', 'other-model', 'mallory');
  type Step =
    readonly ['learn', string, RequestShape, number] | readonly ['shape', string, number, RequestShape];
  const cases: [string, Step[]][] = [
    ['nothing learned: initial', [['shape', a, 0, initial]]],
    [
      "mallory's lowered shape is hers alone: not alice's, not her other model's",
      [
        ['learn', m, lowered, 0],
        ['shape', m, 1, lowered],
        ['shape', a, 1, initial],
        ['shape', other, 1, initial],
      ],
    ],
    [
      'forgotten at the TTL: the full shape is tried again',
      [
        ['learn', a, lowered, 0],
        ['shape', a, SHAPE_TTL_MS - 1, lowered],
        ['shape', a, SHAPE_TTL_MS, initial],
      ],
    ],
    [
      'the same shape used again keeps its learn time',
      [
        ['learn', a, lowered, 0],
        ['learn', a, lowered, SHAPE_TTL_MS - 10],
        ['shape', a, SHAPE_TTL_MS, initial],
      ],
    ],
    [
      'a newly lowered shape starts a new TTL',
      [
        ['learn', a, tokens, 0],
        ['learn', a, lowered, SHAPE_TTL_MS - 10],
        ['shape', a, SHAPE_TTL_MS, lowered],
      ],
    ],
    [
      'the initial shape accepted again clears the key',
      [
        ['learn', a, lowered, 0],
        ['learn', a, initial, 5],
        ['shape', a, 6, initial],
      ],
    ],
  ];
  for (const [name, steps] of cases) {
    const memory = new ShapeMemory(initial);
    for (const step of steps) {
      if (step[0] === 'learn') memory.learn(step[1], step[2], step[3]);
      else assert.deepEqual(memory.shape(step[1], step[2]), step[3], `${name}: ${step[1]} at ${step[2]}`);
    }
  }
});

void test('ShapeMemory (property): a key gets the initial shape or one it learned itself less than the TTL ago, as a model says when nothing is evicted; at most capacity keys', () => {
  const initial = initialShape(100, 0.5);
  const formats: AnswerFormat[] = ['json_schema', 'json_object_schema', 'json_object', 'none'];
  const keys = Array.from({ length: 6 }, (_, i) => breakerKey('e', `m${i % 2}`, `ns${i % 3}`));
  const shape = fc
    .record({
      format: fc.constantFrom(...formats),
      tokensField: fc.constantFrom('both' as const, 'max_tokens' as const, 'max_completion_tokens' as const),
    })
    .map((r): RequestShape => ({ ...initial, ...r }));
  const op = fc.record({
    learn: fc.boolean(),
    key: fc.constantFrom(...keys),
    shape,
    advanceMs: fc.integer({ min: 0, max: SHAPE_TTL_MS / 2 }),
  });
  const same = (a: RequestShape, b: RequestShape): boolean => JSON.stringify(a) === JSON.stringify(b);
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), (ops, capacity) => {
      const memory = new ShapeMemory(initial, { capacity });
      const model = new Map<string, { shape: RequestShape; at: number }>();
      const history: { key: string; shape: RequestShape; at: number }[] = [];
      let now = 0;
      for (const o of ops) {
        now += o.advanceMs;
        if (o.learn) {
          memory.learn(o.key, o.shape, now);
          history.push({ key: o.key, shape: o.shape, at: now });
          const known = model.get(o.key);
          if (same(o.shape, initial)) model.delete(o.key);
          else model.set(o.key, { shape: o.shape, at: known && same(known.shape, o.shape) ? known.at : now });
          continue;
        }
        const got = memory.shape(o.key, now);
        const entry = model.get(o.key);
        const want = entry !== undefined && now - entry.at < SHAPE_TTL_MS ? entry.shape : initial;
        if (want === initial) model.delete(o.key);
        if (capacity >= keys.length) assert.deepEqual(got, want);
        if (!same(got, initial))
          assert.ok(
            history.some((h) => h.key === o.key && same(h.shape, got) && now - h.at < SHAPE_TTL_MS),
            `${o.key} got ${JSON.stringify(got)}, which it did not learn within the TTL`,
          );
        assert.ok(memory.size <= capacity);
      }
    }),
  );
});

void describe('Advisor request shape', () => {
  void test('OpenAI (reasoning model): both token fields, then max_completion_tokens alone; the schema; no sampling parameters; Bearer key', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const a = advisor();
    const r = await ask(a, s);
    assert.equal(r.kind, 'advice');
    assert.equal(s.requests.length, 2);
    assert.equal(body(s, 0)['max_tokens'], 200);
    const b = body(s, 1);
    assert.equal(b['max_completion_tokens'], 200);
    assert.ok(!('max_tokens' in b) && !('temperature' in b));
    assert.deepEqual(b['response_format'], {
      type: 'json_schema',
      json_schema: { name: 'aiops_advice', strict: true, schema: adviceSchema(['ScaleUp', 'Noop']) },
    });
    assert.equal(s.requests[0]?.headers.authorization, `Bearer ${KEY}`);
    assert.equal((await ask(a, s)).kind, 'advice');
    assert.equal(s.requests.length, 3, 'the accepted shape is remembered');
  });

  void test('OpenAI with a configured temperature it refuses: asked again without it, then remembered', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const a = advisor({ temperature: 0 });
    assert.equal((await ask(a, s)).kind, 'advice');
    assert.equal(s.requests.length, 3, 'max_tokens refused, then the temperature');
    assert.equal(body(s, 1)['temperature'], 0);
    assert.ok(!('temperature' in body(s, 2)));
    assert.equal((await ask(a, s)).kind, 'advice');
    assert.equal(s.requests.length, 4, 'the next call goes out in the accepted shape');
    assert.ok(!('temperature' in body(s, 3)));
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

  void test('a refusal is remembered even when the call asked again in the accepted shape times out', async () => {
    const s = await server({ style: 'openai', apiKey: KEY });
    const a = advisor({ defaultTimeoutMs: 500 });
    s.reply({ delayMs: 5_000, then: { json: ADVICE } });
    const r = await ask(a, s);
    assert.equal(r.kind === 'fallback' ? r.reason : r.kind, 'LLMTimeout');
    assert.equal(s.requests.length, 2, 'max_tokens refused, then the timed-out retry');
    s.reply({ json: ADVICE });
    const again = await ask(a, s);
    assert.equal(again.kind, 'advice', JSON.stringify(again));
    assert.equal(s.requests.length, 3, 'the next call goes out in the accepted shape at once');
    assert.ok(!('max_tokens' in body(s, 2)));
  });

  void test('a 400 that names no field it sent is not retried', async () => {
    const s = await server({ style: 'lenient' });
    s.reply({ status: 400, message: 'context length exceeded' });
    const r = await ask(advisor(), s);
    assert.equal(r.kind === 'fallback' ? r.reason : r.kind, 'LLMHTTPError');
    assert.equal(s.requests.length, 1);
  });

  void test('a refusal lowers the shape of that endpoint, model and namespace only, and for 10 min: another tenant, another model and a later call get the schema', async () => {
    const s = await server({ style: 'lenient' });
    let now = 1_000_000;
    const a = advisor({ now: () => now });
    const format = (i: number): unknown => body(s, i)['response_format'];
    const call = (key: string, model: string) => a.advise(key, { endpoint: s.endpoint, model }, CTX);
    s.reply({ status: 400, message: 'The model `response_format` does not exist' });
    assert.equal((await call('mallory/t', 'response_format')).kind, 'fallback');
    assert.equal(s.requests.length, 4, 'stepped down to no response_format');
    s.reply({ json: ADVICE });
    const schema = (i: number): boolean =>
      (format(i) as { type?: string } | undefined)?.type === 'json_schema';
    assert.equal((await call('alice/t', 'response_format')).kind, 'advice');
    assert.ok(schema(4), "alice's call, same endpoint and model: still the schema");
    assert.equal((await call('mallory/t', 'test-model')).kind, 'advice');
    assert.ok(schema(5), "mallory's other model: still the schema");
    await call('mallory/u', 'response_format');
    assert.equal(format(6), undefined, 'the namespace and model that were refused: remembered');
    now += SHAPE_TTL_MS;
    await call('mallory/u', 'response_format');
    assert.ok(schema(7), 'after 10 min the schema is tried again');
  });

  void test('a server refusing every format: one request per step down to none, then the fallback names the status, never the body', async () => {
    const s = await server({ style: 'lenient' });
    const hostile =
      'response_format rejected \u001b]52;c;ZXZpbA==\u0007 see https://admin:hunter2@llm.internal/debug';
    s.reply({ status: 500, message: hostile });
    const r = await ask(advisor(), s);
    assert.deepEqual(
      s.requests.map(
        (q) =>
          (JSON.parse(q.body) as { response_format?: { type: string; schema?: unknown } }).response_format,
      ),
      [
        {
          type: 'json_schema',
          json_schema: { name: 'aiops_advice', strict: true, schema: adviceSchema(['ScaleUp', 'Noop']) },
        },
        { type: 'json_object', schema: adviceSchema(['ScaleUp', 'Noop']) },
        { type: 'json_object' },
        undefined,
      ],
    );
    assert.equal(r.kind, 'fallback');
    assert.equal(r.reason, 'LLMHTTPError');
    assert.equal(r.message, 'the endpoint answered HTTP 500 (Internal Server Error, server_error)');
  });
});
