// The advice's shape, defined once: the JSON Schema sent with each request (so a server with
// structured output constrains its model to it) and the check the strict parser applies to
// every answer are both derived from `adviceSchema`. Every keyword used is one that grammar
// engines enforce (llama.cpp's json-schema-to-grammar, vLLM's xgrammar, OpenAI's strict mode):
// enums, required keys, no other keys, a string `pattern` of one character class with a bounded
// repetition — no numeric `minimum`/`maximum`, which llama.cpp's converter ignores, so confidence
// is an enum of tenths, and no `minLength`/`maxLength`, which OpenAI's strict mode does not take
// (the pattern's `{1,60}` bounds the length instead; llama-cpp-python 0.3.36 turns a string with
// only minLength/maxLength into a grammar that let a random model emit raw control characters,
// invalid JSON). Lengths are bounded so that a byte-level model (one token per character)
// always fits its whole answer in DEFAULT_MAX_COMPLETION_TOKENS (adviceMaxChars ≤ 120 < 200). Pure.

/** Confidence values an answer may carry: 0, 0.1, …, 1. */
export const CONFIDENCE_VALUES: readonly number[] = Array.from({ length: 11 }, (_, i) => i / 10);

/** Longest `reason`, in characters (each one byte: the pattern admits printable ASCII only). */
export const REASON_MAX_CHARS = 60;

/** Characters a `reason` may use: letters, digits, space and plain punctuation (no quote, no backslash). */
export const REASON_PATTERN = `^[A-Za-z0-9 .,;:!?()'%/+=<>_-]{1,${REASON_MAX_CHARS}}$`;

/**
 * A string property: an enum, or a pattern `^[class]{min,max}$` (one character class, its
 * repetition bounding the length; see patternLength).
 */
export type StringProperty =
  | { readonly type: 'string'; readonly enum: readonly string[] }
  | { readonly type: 'string'; readonly pattern: string };

/** The length bounds of a pattern ending in `{min,max}$`; throws for any other pattern. */
export function patternLength(pattern: string): { readonly min: number; readonly max: number } {
  const m = /\{(\d+),(\d+)\}\$$/.exec(pattern);
  if (m === null) throw new Error(`pattern ${pattern} does not end in {min,max}$`);
  return { min: Number(m[1]), max: Number(m[2]) };
}

/** A number property limited to an enum. */
export interface NumberProperty {
  readonly type: 'number';
  readonly enum: readonly number[];
}

/** The JSON Schema of an answer (a strict subset every structured-output engine enforces). */
export interface AdviceSchema {
  readonly type: 'object';
  readonly properties: {
    readonly action: StringProperty;
    readonly confidence: NumberProperty;
    readonly reason: StringProperty;
  };
  readonly required: readonly ['action', 'confidence', 'reason'];
  readonly additionalProperties: false;
}

/** The schema of an answer choosing one of `allowed` (the configured action and Noop). */
export function adviceSchema(allowed: readonly string[]): AdviceSchema {
  return {
    type: 'object',
    properties: {
      action: { type: 'string', enum: [...allowed] },
      confidence: { type: 'number', enum: CONFIDENCE_VALUES },
      reason: { type: 'string', pattern: REASON_PATTERN },
    },
    required: ['action', 'confidence', 'reason'],
    additionalProperties: false,
  };
}

/**
 * Upper bound of an answer's length in characters under `schema` written compactly with at
 * most one space at each of the 8 places a grammar allows one (llama.cpp's `space ::= " "?`).
 */
export function adviceMaxChars(schema: AdviceSchema): number {
  const p = schema.properties;
  const longest = (values: readonly unknown[]): number =>
    Math.max(0, ...values.map((v) => JSON.stringify(v).length));
  const stringMax = (s: StringProperty): number =>
    'enum' in s ? longest(s.enum) : patternLength(s.pattern).max + 2;
  const keys = schema.required.reduce((n, k) => n + k.length + 3, 0); // "key":
  return 2 + keys + 2 + stringMax(p.action) + longest(p.confidence.enum) + stringMax(p.reason) + 8;
}

/** Where an answer breaks its schema: the property (undefined for the object itself) and why. */
export interface SchemaViolation {
  readonly property?: keyof AdviceSchema['properties'];
  readonly keyword: 'type' | 'required' | 'additionalProperties' | 'enum' | 'pattern';
  readonly message: string;
}

function checkString(s: StringProperty, value: string): Omit<SchemaViolation, 'property'> | undefined {
  if ('enum' in s)
    return s.enum.includes(value)
      ? undefined
      : { keyword: 'enum', message: `is not one of ${s.enum.join(', ')}` };
  if (new RegExp(s.pattern, 'u').test(value)) return undefined;
  const { min, max } = patternLength(s.pattern);
  return {
    keyword: 'pattern',
    message: `is not ${min} to ${max} letters, digits, spaces or plain punctuation characters`,
  };
}

/**
 * The first way `value` breaks `schema`, or undefined when it matches: the type, the exact
 * set of keys, then each property in schema order (enum, length, pattern).
 */
export function checkAdvice(schema: AdviceSchema, value: unknown): SchemaViolation | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { keyword: 'type', message: 'the answer is not a JSON object' };
  const keys = Object.keys(value);
  const missing = schema.required.filter((k) => !keys.includes(k));
  const extra = keys.filter((k) => !(k in schema.properties));
  if (missing.length > 0 || extra.length > 0)
    return {
      keyword: missing.length > 0 ? 'required' : 'additionalProperties',
      message: `the answer must have exactly ${schema.required.join(', ')}; it has ${keys.sort().join(', ') || 'no key'}`,
    };
  const doc = value as Record<string, unknown>;
  for (const property of schema.required) {
    const spec = schema.properties[property];
    const v = doc[property];
    const broken =
      spec.type === 'number'
        ? typeof v !== 'number'
          ? { keyword: 'type' as const, message: 'is not a number' }
          : spec.enum.includes(v)
            ? undefined
            : { keyword: 'enum' as const, message: `is not one of ${spec.enum.join(', ')}` }
        : typeof v !== 'string'
          ? { keyword: 'type' as const, message: 'is not a string' }
          : checkString(spec, v);
    if (broken !== undefined)
      return { property, keyword: broken.keyword, message: `${property} ${broken.message}` };
  }
  return undefined;
}
