import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  breakerKey,
  CallBudget,
  CircuitBreaker,
  DEFAULT_MAX_ENDPOINTS,
  endpointAllowed,
  isLoopback,
  keyTransportRefusal,
  parseAllowlist,
} from './policy.ts';

test('allow-list: each entry binds scheme, host, port and path prefix, table', () => {
  const rules = parseAllowlist(
    ' https://llm.example.com/v1/ , *.ai.internal, 10.0.0.5:8443 ,http://127.0.0.1:8080/v1, LLM.Corp.example,https://bücher.example/api,',
  );
  const cases: [string, boolean][] = [
    // URL prefix: scheme, host, port (default 443 for https) and path.
    ['https://llm.example.com/v1/chat/completions', true],
    ['https://LLM.EXAMPLE.COM:443/v1/chat/completions', true],
    ['https://llm.example.com/v1', false],
    ['https://llm.example.com/v2/chat/completions', false],
    ['http://llm.example.com/v1/chat/completions', false],
    ['https://llm.example.com:8443/v1/chat/completions', false],
    ['https://llm.example.com./v1/chat/completions', false],
    ['https://llm.example.com.evil.com/v1/chat/completions', false],
    ['https://llm.example.com@evil.com/v1/chat/completions', false],
    ['https://user:pw@llm.example.com/v1/chat/completions', false],
    ['https://llm.example.com/v1/../admin', false],
    ['https://llm.example.com/v1/%2e%2e/admin', false],
    ['https://llm.example.com/v1/..%2Fadmin', false],
    ['https://llm.example.com/v1/..%5cadmin', false],
    // Host pattern: https only, port 443 unless one is written, any path.
    ['https://a.ai.internal/v1/chat/completions', true],
    ['https://b.a.ai.internal/x', true],
    ['http://a.ai.internal/v1/chat/completions', false],
    ['https://a.ai.internal:9000/x', false],
    ['https://ai.internal/v1', false],
    ['https://evilai.internal/v1', false],
    ['https://10.0.0.5:8443/v1/chat/completions', true],
    ['https://10.0.0.5/v1/chat/completions', false],
    ['http://10.0.0.5:8443/v1/chat/completions', false],
    ['https://llm.corp.example/anything', true],
    ['https://Llm.Corp.Example:443/x', true],
    ['https://llm.corp.example:8443/x', false],
    ['http://llm.corp.example/x', false],
    ['https://llm.corp.example@evil.example.com/', false],
    ['https://evil.example.com#@llm.corp.example/', false],
    // http URL prefix with a port: that port, that path.
    ['http://127.0.0.1:8080/v1/chat/completions', true],
    ['http://2130706433:8080/v1/chat/completions', true],
    ['http://127.0.0.1:8081/v1/chat/completions', false],
    ['http://127.0.0.1/v1/chat/completions', false],
    ['https://127.0.0.1:8080/v1/chat/completions', false],
    ['http://127.0.0.1:8080/admin', false],
    ['http://localhost:8080/v1/chat/completions', false],
    // IDN: compared in punycode, whichever way the endpoint writes it.
    ['https://BÜCHER.example/api/v1', true],
    ['https://xn--bcher-kva.example/api/v1', true],
    ['https://bucher.example/api/v1', false],
    ['ftp://127.0.0.1:8080/v1', false],
    ['not a url', false],
  ];
  for (const [url, want] of cases) assert.equal(endpointAllowed(url, rules), want, url);
  assert.equal(endpointAllowed('https://llm.example.com/v1/x', []), false, 'empty list allows nothing');
  const path = parseAllowlist('http://h/v1');
  assert.equal(endpointAllowed('http://h/v1', path), true);
  assert.equal(endpointAllowed('http://h:80/v1/chat', path), true, 'the default port, written or not');
  assert.equal(endpointAllowed('http://h:8080/v1/chat', path), false);
  assert.equal(endpointAllowed('http://h/v10/chat', path), false);
  assert.equal(endpointAllowed('https://h:443/x', parseAllowlist('h')), true);
  assert.equal(endpointAllowed('https://h:444/x', parseAllowlist('h')), false);
});

test('allow-list (property): a host pattern never allows another scheme, port or host', () => {
  const rules = parseAllowlist('llm.example.com');
  fc.assert(
    fc.property(
      fc.constantFrom('http', 'https'),
      fc.constantFrom(
        'llm.example.com',
        'LLM.example.com',
        'llm.example.com.',
        'evil.com',
        'xllm.example.com',
      ),
      fc.integer({ min: 1, max: 65535 }),
      fc.webPath(),
      (scheme, host, port, path) => {
        const url = `${scheme}://${host}:${port}${path}`;
        const want = scheme === 'https' && host.toLowerCase() === 'llm.example.com' && port === 443;
        if (!/%2f|%5c/i.test(path)) assert.equal(endpointAllowed(url, rules), want, url);
      },
    ),
  );
});

test('allow-list: malformed entries are refused with the entry named', () => {
  for (const bad of [
    'ftp://x/',
    'https://u:p@x/',
    'https://x/?q=1',
    'exa mple.com',
    'x.com:99999',
    '*',
    'bücher.example',
  ]) {
    assert.throws(
      () => parseAllowlist(bad),
      (err: Error) => err.message.includes(bad.split(':')[0] ?? bad),
    );
  }
  assert.deepEqual(parseAllowlist(''), []);
});

test('call budget: per task and global per sliding hour; refusals do not count', () => {
  const b = new CallBudget(2, 3);
  const t0 = 1_000_000;
  assert.equal(b.take('a', t0), undefined);
  assert.equal(b.take('a', t0 + 1), undefined);
  assert.deepEqual(b.take('a', t0 + 2), { scope: 'task', retryAt: t0 + 3_600_000 });
  assert.equal(b.take('b', t0 + 3), undefined);
  assert.equal(b.take('c', t0 + 4)?.scope, 'global');
  assert.equal(b.take('a', t0 + 3_600_001), undefined, 'the first call left the window');
  assert.equal(b.take('c', t0 + 3_600_002), undefined);
  assert.equal(b.take('c', t0 + 3_600_002)?.scope, 'global', 'b, a and c fill the global window');
});

test('call budget (property): within any hour no task exceeds its limit, nor all tasks the global one', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 600_000 })), {
        maxLength: 200,
      }),
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 0, max: 8 }),
      (calls, perTask, global) => {
        const b = new CallBudget(perTask, global);
        let now = 0;
        const granted: [string, number][] = [];
        for (const [key, step] of calls) {
          now += step;
          if (b.take(key, now) === undefined) granted.push([key, now]);
        }
        for (const [, t] of granted) {
          const inHour = granted.filter(([, u]) => u > t - 3_600_000 && u <= t);
          assert.ok(inHour.length <= global);
          for (const k of ['a', 'b', 'c']) assert.ok(inHour.filter(([x]) => x === k).length <= perTask);
        }
      },
    ),
  );
});

test('call budget: one namespace uses at most its share of the hour; other namespaces still get calls', () => {
  const b = new CallBudget(10, 6, 2);
  const t0 = 5_000_000;
  assert.equal(b.take('a/one', t0), undefined);
  assert.equal(b.take('a/two', t0 + 1), undefined);
  assert.deepEqual(b.take('a/three', t0 + 2), { scope: 'namespace', retryAt: t0 + 3_600_000 });
  b.forget('a/one');
  assert.equal(b.take('a/one', t0 + 2)?.scope, 'namespace', 'a deleted task’s calls still count');
  assert.equal(b.take('b/one', t0 + 3), undefined, 'namespace b has its own share');
  assert.equal(b.take('b/one', t0 + 4), undefined);
  assert.equal(b.take('b/two', t0 + 5)?.scope, 'namespace');
  assert.equal(b.take('c/x', t0 + 6), undefined);
  assert.equal(b.take('c/y', t0 + 7), undefined);
  assert.equal(b.take('d/x', t0 + 8)?.scope, 'global', 'six calls fill the global window');
  assert.equal(b.take('a/one', t0 + 3_600_001), undefined, 'a’s first call left the window');
  assert.equal(b.namespaces, 3, 'a, b, c hold calls of the last hour');
  assert.equal(b.take('e/x', t0 + 9_000_000), undefined);
  assert.equal(b.namespaces, 1, 'namespaces without a call in the window are dropped');
  assert.equal(new CallBudget(1, 1).take('x/y', 0), undefined, 'no share given: the global limit only');
});

test('call budget (property): within any hour no task, namespace or all together exceed their limits', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.constantFrom('n1/a', 'n1/b', 'n2/a', 'n3/c'), fc.integer({ min: 0, max: 600_000 })),
        { maxLength: 200 },
      ),
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: 8 }),
      (calls, perTask, perNamespace, global) => {
        const b = new CallBudget(perTask, global, perNamespace);
        let now = 0;
        const granted: [string, number][] = [];
        for (const [key, step] of calls) {
          now += step;
          if (b.take(key, now) === undefined) granted.push([key, now]);
        }
        for (const [, t] of granted) {
          const inHour = granted.filter(([, u]) => u > t - 3_600_000 && u <= t);
          assert.ok(inHour.length <= global);
          for (const ns of ['n1', 'n2', 'n3'])
            assert.ok(inHour.filter(([k]) => k.startsWith(`${ns}/`)).length <= perNamespace);
        }
      },
    ),
  );
});

test('circuit breaker key: failures of one namespace open the breaker of its endpoint, model and namespace only', () => {
  const cb = new CircuitBreaker(3, 300_000);
  const e = 'https://llm.example.com/v1/chat/completions';
  const bogus = breakerKey(e, 'no-such-model', 'mallory');
  for (let i = 0; i < 3; i++) cb.failure(bogus, i);
  assert.equal(cb.allow(bogus, 10).ok, false, 'the failing model is suspended for that namespace');
  assert.deepEqual(
    cb.allow(breakerKey(e, 'gpt-4o-mini', 'mallory'), 10),
    { ok: true },
    'another model on it is not',
  );
  assert.deepEqual(
    cb.allow(breakerKey(`${e}/x`, 'no-such-model', 'mallory'), 10),
    { ok: true },
    'nor another endpoint',
  );
  assert.deepEqual(
    cb.allow(breakerKey(e, 'no-such-model', 'alice'), 10),
    { ok: true },
    'nor the same endpoint and model for another namespace',
  );
  const keys = [
    breakerKey('https://a/', 'b c', 'n'),
    breakerKey('https://a/ b', 'c', 'n'),
    breakerKey('https://a/","', 'x', 'n'),
    breakerKey('https://a/', '","x', 'n'),
    breakerKey('https://a/', 'x', '","n'),
  ];
  assert.equal(new Set(keys).size, keys.length, 'no two triples share a key');
});

test('circuit breaker: opens after N consecutive failures, one trial after the cool-off', () => {
  const cb = new CircuitBreaker(2, 1000);
  const e = 'http://llm/v1';
  assert.deepEqual(cb.allow(e, 0), { ok: true });
  assert.equal(cb.failure(e, 0), false);
  cb.success(e);
  assert.equal(cb.failure(e, 1), false, 'a success resets the count');
  assert.equal(cb.failure(e, 2), true);
  assert.deepEqual(cb.allow(e, 500), { ok: false, retryAt: 1002 });
  assert.deepEqual(cb.allow('http://other/v1', 500), { ok: true }, 'per endpoint');
  assert.deepEqual(cb.allow(e, 1002), { ok: true }, 'half-open trial');
  assert.equal(cb.allow(e, 1003).ok, false, 'only one trial at a time');
  assert.equal(cb.failure(e, 1004), true, 'a failed trial opens it again');
  assert.equal(cb.allow(e, 1500).ok, false);
  assert.equal(cb.allow(e, 2004).ok, true);
  cb.success(e);
  assert.equal(cb.allow(e, 2005).ok, true);
});

test('an API key may go over https anywhere and over http to loopback only, table', () => {
  const cases: [string, boolean][] = [
    ['https://llm.example.com/v1/chat/completions', true],
    ['http://127.0.0.1:8080/v1/chat/completions', true],
    ['http://127.1.2.3/v1', true],
    ['http://localhost:11434/v1/chat/completions', true],
    ['http://LOCALHOST/v1', true],
    ['http://[::1]:8000/v1', true],
    ['http://llm.example.com/v1/chat/completions', false],
    ['http://10.0.0.5:8000/v1', false],
    ['http://127.0.0.1.nip.io/v1', false],
    ['http://localhost.evil.com/v1', false],
    ['http://[::2]/v1', false],
  ];
  for (const [url, ok] of cases) {
    const refusal = keyTransportRefusal(url);
    assert.equal(refusal === undefined, ok, url);
    if (!ok) assert.match(refusal ?? '', /plain http .* not loopback.*not contacted/);
  }
  assert.equal(isLoopback('127.0.0.1'), true);
  assert.equal(isLoopback('128.0.0.1'), false);
});

test('the circuit breaker keeps at most maxEndpoints endpoints; a dropped one starts closed', () => {
  assert.equal(DEFAULT_MAX_ENDPOINTS, 1000);
  const b = new CircuitBreaker(1, 60_000, 3);
  b.failure('https://a/', 0);
  assert.equal(b.allow('https://a/', 1).ok, false, 'a is open');
  for (let i = 0; i < 50; i++) b.failure(`https://e${i}/`, 0);
  assert.equal(b.size, 3);
  assert.equal(b.allow('https://a/', 2).ok, true, 'a was dropped, so it reads as closed');
  assert.equal(b.allow('https://e49/', 2).ok, false, 'the most recent stays open');
  const unbounded = new CircuitBreaker(1, 60_000);
  for (let i = 0; i < 1500; i++) unbounded.failure(`https://e${i}/`, 0);
  assert.equal(unbounded.size, DEFAULT_MAX_ENDPOINTS);
});
