// The chat-completions request the advisor sends, and how its optional parts are negotiated
// per server. Servers differ exactly where the advisor needs them:
// - the token limit: current OpenAI wants `max_completion_tokens` and refuses `max_tokens` for
//   reasoning models; an older vLLM forbids `max_completion_tokens`; llama-cpp-python and
//   Ollama silently ignore the one they do not know (so only `max_tokens` limits them). The
//   first request carries both; a server that refuses one by name is asked without it.
// - structured output: OpenAI, vLLM and llama.cpp's llama-server take
//   `response_format: {type: "json_schema", json_schema: {name, strict, schema}}`;
//   llama-cpp-python answers that with HTTP 500 and takes `{type: "json_object", schema}`;
//   some servers know only `{type: "json_object"}`, a few no `response_format` at all. The
//   advisor tries them in that order (ANSWER_FORMATS), one step down each time a server
//   refuses the field by name.
// - a configured temperature, refused by some reasoning models.
// The schema is adviceSchema's: the one the parser checks answers against.
// What a server refused is remembered (ShapeMemory) per endpoint, model and namespace, for
// SHAPE_TTL_MS: a model's refusal says nothing about another model on the same endpoint, and
// a refusal seen on one tenant's call never lowers another tenant's requests (a tenant names
// the model, and a model name can make a server's error text name `response_format`). Past
// the TTL, or once evicted, the full shape is tried again. Pure.

import { adviceSchema } from './answer-schema.ts';
import { LruMap } from '../../lib/lru-map.ts';
import { DEFAULT_MAX_ENDPOINTS } from './policy.ts';
import { systemPrompt, type AdviceContext } from './protocol.ts';

/** Field(s) the completion-token limit is sent in; `both` until a server refuses one. */
export type TokensField = 'both' | 'max_completion_tokens' | 'max_tokens';

/** How the answer's JSON shape is asked for, from most to least specific. */
export type AnswerFormat = 'json_schema' | 'json_object_schema' | 'json_object' | 'none';

/** The order formats are tried in: each refusal of `response_format` moves one step right. */
export const ANSWER_FORMATS: readonly AnswerFormat[] = [
  'json_schema',
  'json_object_schema',
  'json_object',
  'none',
];

/** The name the schema travels under in `json_schema` requests. */
export const SCHEMA_NAME = 'aiops_advice';

/** The optional fields of a request, as configured and as adjusted for one server. */
export interface RequestShape {
  /** Completion-token limit. */
  readonly maxCompletionTokens: number;
  /** Field(s) the limit is sent in (initially `both`). */
  readonly tokensField: TokensField;
  /** Sampling temperature; undefined: not sent. */
  readonly temperature?: number;
  /** How the answer's shape is asked for (initially `json_schema`). */
  readonly format: AnswerFormat;
}

/** The shape before any server has refused anything. */
export function initialShape(maxCompletionTokens: number, temperature?: number): RequestShape {
  return {
    maxCompletionTokens,
    tokensField: 'both',
    format: 'json_schema',
    ...(temperature !== undefined ? { temperature } : {}),
  };
}

/** The `response_format` member for `format` and the schema of answers choosing one of `allowed`. */
export function responseFormat(format: AnswerFormat, allowed: readonly string[]): Record<string, unknown> {
  const schema = adviceSchema(allowed);
  switch (format) {
    case 'json_schema':
      return {
        response_format: { type: 'json_schema', json_schema: { name: SCHEMA_NAME, strict: true, schema } },
      };
    case 'json_object_schema':
      return { response_format: { type: 'json_object', schema } };
    case 'json_object':
      return { response_format: { type: 'json_object' } };
    case 'none':
      return {};
  }
}

/** The chat-completions request body for `model` about `ctx` in `shape`. */
export function chatRequest(model: string, ctx: AdviceContext, shape: RequestShape): Record<string, unknown> {
  const limit = shape.maxCompletionTokens;
  return {
    model,
    messages: [
      { role: 'system', content: systemPrompt(ctx.allowedActions) },
      { role: 'user', content: JSON.stringify(ctx) },
    ],
    ...(shape.tokensField !== 'max_tokens' ? { max_completion_tokens: limit } : {}),
    ...(shape.tokensField !== 'max_completion_tokens' ? { max_tokens: limit } : {}),
    ...(shape.temperature !== undefined ? { temperature: shape.temperature } : {}),
    ...responseFormat(shape.format, ctx.allowedActions),
  };
}

/** The fields an error body names: its OpenAI `error.param` and `error.message`, `message`, `detail`. */
function namedText(body: string): string {
  try {
    const doc = JSON.parse(body) as {
      error?: { message?: unknown; param?: unknown };
      message?: unknown;
      detail?: unknown;
    } | null;
    return JSON.stringify([doc?.error?.param, doc?.error?.message, doc?.message, doc?.detail]);
  } catch {
    return body; // Not JSON: the raw text names the field, if anything does.
  }
}

/**
 * How to ask again after HTTP `status` with `body`, or undefined when the answer is not a
 * refusal of a field the request carried or nothing is left to change. A 400 or 422 naming a
 * token-limit field drops it (from `both`) or switches to the other; one naming `temperature`
 * drops it. A 400, 422 or 500 (llama-cpp-python's answer to `json_schema`) naming
 * `response_format`, `json_schema` or `schema` moves the format one step down ANSWER_FORMATS.
 */
export function adjustShape(status: number, body: string, shape: RequestShape): RequestShape | undefined {
  if (status !== 400 && status !== 422 && status !== 500) return undefined;
  const text = namedText(body);
  const names = (field: string): boolean => new RegExp(`\\b${field}\\b`).test(text);
  if (status !== 500) {
    if (shape.tokensField !== 'max_completion_tokens' && names('max_tokens'))
      return { ...shape, tokensField: 'max_completion_tokens' };
    if (shape.tokensField !== 'max_tokens' && names('max_completion_tokens'))
      return { ...shape, tokensField: 'max_tokens' };
    if (shape.temperature !== undefined && names('temperature'))
      return {
        maxCompletionTokens: shape.maxCompletionTokens,
        tokensField: shape.tokensField,
        format: shape.format,
      };
  }
  const next = ANSWER_FORMATS[ANSWER_FORMATS.indexOf(shape.format) + 1];
  if (next !== undefined && (names('response_format') || names('json_schema') || names('schema')))
    return { ...shape, format: next };
  return undefined;
}

/** Most requests one call may take: one refusal per token field, temperature and format step, plus the last. */
export const MAX_ATTEMPTS = 2 + 1 + (ANSWER_FORMATS.length - 1) + 1;

/** How long a learned shape is used before the full shape is tried again: 10 min, in ms. */
export const SHAPE_TTL_MS = 600_000;

/**
 * The request shapes servers were adjusted to, by key (the advisor's: endpoint, model and the
 * asking AITask's namespace, breakerKey), each used for `ttlMs` after it was learned (default
 * SHAPE_TTL_MS) and at most `capacity` of them kept (default DEFAULT_MAX_ENDPOINTS), least
 * recently used dropped first. A key with nothing learned, expired or dropped gets `initial`:
 * forgetting only ever costs a call the retries that learn the shape again.
 */
export class ShapeMemory {
  readonly #initial: RequestShape;
  readonly #ttlMs: number;
  readonly #shapes: LruMap<string, { readonly shape: RequestShape; readonly learnedAt: number }>;

  constructor(initial: RequestShape, opts: { readonly ttlMs?: number; readonly capacity?: number } = {}) {
    this.#initial = initial;
    this.#ttlMs = opts.ttlMs ?? SHAPE_TTL_MS;
    this.#shapes = new LruMap(opts.capacity ?? DEFAULT_MAX_ENDPOINTS);
  }

  /** The shape to send under `key` at `now` (ms): the one learned within the TTL, else the initial one. */
  shape(key: string, now: number): RequestShape {
    const learned = this.#shapes.get(key);
    if (learned === undefined) return this.#initial;
    if (now - learned.learnedAt < this.#ttlMs) return learned.shape;
    this.#shapes.delete(key);
    return this.#initial;
  }

  /**
   * Records that `key`'s server ended a call at `now` (ms) in `shape`. A shape lowered during
   * the call starts a new TTL; the same learned shape used again keeps its time (so it is
   * retried from the top at the latest SHAPE_TTL_MS after it was learned); the initial shape
   * clears the key.
   */
  learn(key: string, shape: RequestShape, now: number): void {
    if (sameShape(shape, this.#initial)) {
      this.#shapes.delete(key);
      return;
    }
    const known = this.#shapes.get(key);
    const learnedAt = known !== undefined && sameShape(known.shape, shape) ? known.learnedAt : now;
    this.#shapes.set(key, { shape, learnedAt });
  }

  /** Keys remembered (at most the capacity). */
  get size(): number {
    return this.#shapes.size;
  }
}

function sameShape(a: RequestShape, b: RequestShape): boolean {
  return (
    a.format === b.format &&
    a.tokensField === b.tokensField &&
    a.temperature === b.temperature &&
    a.maxCompletionTokens === b.maxCompletionTokens
  );
}
