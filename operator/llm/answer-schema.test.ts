import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  adviceMaxChars,
  adviceSchema,
  checkAdvice,
  CONFIDENCE_VALUES,
  REASON_MAX_CHARS,
} from './answer-schema.ts';
import { DEFAULT_MAX_COMPLETION_TOKENS } from './protocol.ts';

const ACTIONS = ['RestartPod', 'ScaleUp', 'ScaleDown', 'CordonNode', 'Noop'];
const schema = adviceSchema(['ScaleUp', 'Noop']);

test('checkAdvice: table of answers, with the property and keyword that break the schema', () => {
  const cases: [string, unknown, string | undefined][] = [
    ['valid', { action: 'ScaleUp', confidence: 0.7, reason: "it's 5x the threshold" }, undefined],
    ['noop, confidence 0', { action: 'Noop', confidence: 0, reason: 'transient' }, undefined],
    ['null', null, 'type'],
    ['array', [], 'type'],
    ['missing reason', { action: 'ScaleUp', confidence: 1 }, 'required'],
    ['extra key', { action: 'ScaleUp', confidence: 1, reason: 'x', run: 'rm' }, 'additionalProperties'],
    ['other action', { action: 'CordonNode', confidence: 1, reason: 'x' }, 'action enum'],
    ['action not a string', { action: 1, confidence: 1, reason: 'x' }, 'action type'],
    ['confidence string', { action: 'Noop', confidence: '1', reason: 'x' }, 'confidence type'],
    ['confidence 0.85', { action: 'Noop', confidence: 0.85, reason: 'x' }, 'confidence enum'],
    ['confidence -0.1', { action: 'Noop', confidence: -0.1, reason: 'x' }, 'confidence enum'],
    ['empty reason', { action: 'Noop', confidence: 1, reason: '' }, 'reason pattern'],
    ['long reason', { action: 'Noop', confidence: 1, reason: 'y'.repeat(61) }, 'reason pattern'],
    ['newline', { action: 'Noop', confidence: 1, reason: 'a\nb' }, 'reason pattern'],
    ['quote', { action: 'Noop', confidence: 1, reason: 'say "hi"' }, 'reason pattern'],
    ['em dash', { action: 'Noop', confidence: 1, reason: 'high — scale' }, 'reason pattern'],
  ];
  for (const [name, value, want] of cases) {
    const v = checkAdvice(schema, value);
    assert.equal(v === undefined ? undefined : [v.property, v.keyword].filter(Boolean).join(' '), want, name);
  }
});

test('the schema uses only keywords grammar engines enforce, and is plain JSON', () => {
  const text = JSON.stringify(schema);
  assert.deepEqual(JSON.parse(text), schema);
  // Not in llama.cpp's converter (minimum, maximum) or not in OpenAI's strict mode (minLength, maxLength).
  for (const unsupported of ['minimum', 'maximum', 'minLength', 'maxLength', 'format', '$ref', 'anyOf'])
    assert.ok(!text.includes(`"${unsupported}"`), unsupported);
  assert.deepEqual(schema.properties.confidence.enum, [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
});

test('(property) every answer the schema admits is at most adviceMaxChars, which fits the default token limit', () => {
  const reasonChar = fc.constantFrom(..."Aa0 .,;:!?()'%/+=<>_-".split(''));
  fc.assert(
    fc.property(
      fc.subarray(ACTIONS, { minLength: 1 }),
      fc.nat(),
      fc.constantFrom(...CONFIDENCE_VALUES),
      fc.array(reasonChar, { minLength: 1, maxLength: REASON_MAX_CHARS }),
      fc.boolean(),
      (allowed, pick, confidence, chars, spaced) => {
        const s = adviceSchema(allowed);
        const answer = { action: allowed[pick % allowed.length], confidence, reason: chars.join('') };
        assert.equal(checkAdvice(s, answer), undefined);
        const text = JSON.stringify(answer, null, spaced ? 1 : undefined).replace(/\n/g, '');
        assert.ok(text.length <= adviceMaxChars(s), `${text.length} > ${adviceMaxChars(s)}: ${text}`);
        // A byte-level model spends one token per character (the pattern admits ASCII only).
        assert.ok(adviceMaxChars(s) < DEFAULT_MAX_COMPLETION_TOKENS);
      },
    ),
  );
});
