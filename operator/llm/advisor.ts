// The LLM advisor's I/O edge: checks the allow-list, the circuit breaker of the endpoint,
// model and namespace, and the call budget of the AITask, its namespace and the operator
// (policy.ts), POSTs the redacted context with the advice's JSON Schema to the
// chat-completions endpoint with a timeout and without following redirects (with the API key
// as a Bearer token when one is configured, with no Authorization header otherwise: local
// vLLM, llama.cpp and Ollama servers need none; a key never goes over plain http except to
// loopback), and reads at most `maxResponseBytes` of the answer (protocol.ts). A server that
// refuses a request field by name — a token-limit field, the temperature, a structured-output
// format — is asked again without it, within the same call and timeout (request-shape.ts),
// and the shape it accepted is kept for that endpoint, model and namespace, for 10 min (for a
// bounded number of keys; ShapeMemory), so one tenant's model never lowers another's requests.
// Each call that goes out is measured (model, latency, the tokens the server reports) for the
// decision record and the metrics. It never throws: every problem is a fallback with a
// specific reason, and the rules decide.

import type * as v2 from '../../api/schema/v2.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, readBounded } from '../runtime/bounded-body.ts';
import {
  breakerKey,
  endpointAllowed,
  keyTransportRefusal,
  type AllowRule,
  type CallBudget,
  type CircuitBreaker,
} from './policy.ts';
import { adjustShape, chatRequest, initialShape, MAX_ATTEMPTS, ShapeMemory } from './request-shape.ts';
import {
  DEFAULT_MAX_COMPLETION_TOKENS,
  parseCompletion,
  parseUsage,
  type Advice,
  type AdviceContext,
  type LLMFailureReason,
} from './protocol.ts';

/** The LLM settings of an AITask (spec.decision.llm). */
export type LLMSpec = NonNullable<NonNullable<v2.Spec['decision']>['llm']>;

/** What the advisor came back with; `call` when a request went out (not for a refusal before it). */
export type AdviceResult =
  | { readonly kind: 'advice'; readonly advice: Advice; readonly call?: v2.DecisionLLMCall }
  | {
      readonly kind: 'fallback';
      readonly reason: LLMFailureReason;
      readonly message: string;
      readonly call?: v2.DecisionLLMCall;
    };

/** Options of Advisor. */
export interface AdvisorOptions {
  /** Endpoints that may be contacted (`--llm-endpoint-allowlist`); empty: none. */
  readonly allowlist: readonly AllowRule[];
  /** Calls per hour; taken with the AITask's key `namespace/name`. */
  readonly budget: CallBudget;
  /** Keyed by endpoint, model and the AITask's namespace (breakerKey). */
  readonly breaker: CircuitBreaker;
  /**
   * Name of the operator's env var holding the API key (`--llm-api-key-env`), read at each
   * call and sent as `Authorization: Bearer`; undefined, or the variable empty or unset: no
   * Authorization header.
   */
  readonly apiKeyEnv?: string;
  /** Model when `llm.model` is unset (`--llm-default-model`). */
  readonly defaultModel: string;
  /** Completion-token limit of each request (default DEFAULT_MAX_COMPLETION_TOKENS). */
  readonly maxCompletionTokens?: number;
  /** Sampling temperature sent with each request; undefined: none is sent. */
  readonly temperature?: number;
  /** Timeout when `llm.timeoutSeconds` is unset, in ms (default 10 000). No retries. */
  readonly defaultTimeoutMs?: number;
  /** Largest answer read, in bytes (default DEFAULT_MAX_RESPONSE_BYTES, 1 MiB); a larger one fails the call. */
  readonly maxResponseBytes?: number;
  /** Called once per outcome ('advice' or a failure reason), for the metrics. */
  readonly onOutcome?: (outcome: 'advice' | LLMFailureReason) => void;
  /** Called once per call that went out, with its model, latency and tokens, for the metrics. */
  readonly onCall?: (call: v2.DecisionLLMCall) => void;
  /** Clock in ms (default Date.now). */
  readonly now?: () => number;
  /** Environment the key is read from (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const BUDGET_NAMES = { task: 'per-AITask', namespace: 'per-namespace', global: 'operator-wide' } as const;

/** Asks an LLM for advice within the operator's limits. */
export class Advisor {
  readonly #o: AdvisorOptions;
  /** The request shape each endpoint, model and namespace was adjusted to (breakerKey; ShapeMemory's bounds). */
  readonly #shapes: ShapeMemory;

  constructor(opts: AdvisorOptions) {
    this.#o = opts;
    this.#shapes = new ShapeMemory(
      initialShape(opts.maxCompletionTokens ?? DEFAULT_MAX_COMPLETION_TOKENS, opts.temperature),
    );
  }

  /** Advice for the AITask `key` in `ctx`, or why there is none. Never throws. */
  async advise(key: string, llm: LLMSpec, ctx: AdviceContext): Promise<AdviceResult> {
    const result = await this.#advise(key, llm, ctx);
    this.#o.onOutcome?.(result.kind === 'advice' ? 'advice' : result.reason);
    if (result.call !== undefined) this.#o.onCall?.(result.call);
    return result;
  }

  /** Drops the call history of the AITask `key` (deleted). */
  forget(key: string): void {
    this.#o.budget.forget(key);
  }

  async #advise(key: string, llm: LLMSpec, ctx: AdviceContext): Promise<AdviceResult> {
    const o = this.#o;
    const now = (o.now ?? Date.now)();
    const endpoint = llm.endpoint;
    if (!endpointAllowed(endpoint, o.allowlist))
      return fallback(
        'LLMEndpointNotAllowed',
        `${endpoint} is not in the operator's --llm-endpoint-allowlist (AIOPS_LLM_ENDPOINT_ALLOWLIST); it was not contacted`,
      );
    const configured = o.apiKeyEnv !== undefined ? (o.env ?? process.env)[o.apiKeyEnv] : undefined;
    const apiKey = configured === undefined || configured === '' ? undefined : configured;
    const insecure = apiKey !== undefined ? keyTransportRefusal(endpoint) : undefined;
    if (insecure !== undefined) return fallback('LLMInsecureEndpoint', insecure);
    const model = llm.model ?? o.defaultModel;
    const namespace = key.slice(0, Math.max(0, key.indexOf('/')));
    const circuit = breakerKey(endpoint, model, namespace);
    const gate = o.breaker.allow(circuit, now);
    if (!gate.ok)
      return fallback(
        'LLMCircuitOpen',
        `calls of model ${JSON.stringify(model)} to ${endpoint} for namespace ${namespace} are suspended after repeated failures until ${new Date(gate.retryAt).toISOString()}`,
      );
    const refused = o.budget.take(key, now);
    if (refused)
      return fallback(
        'LLMBudgetExhausted',
        `the ${BUDGET_NAMES[refused.scope]} LLM call budget is used up until ${new Date(refused.retryAt).toISOString()}`,
      );
    const timeoutMs =
      llm.timeoutSeconds !== undefined ? llm.timeoutSeconds * 1000 : (o.defaultTimeoutMs ?? 10_000);
    const started = performance.now();
    const answer = await this.#call(endpoint, apiKey, model, circuit, ctx, timeoutMs);
    const call: v2.DecisionLLMCall = {
      model,
      latencyMs: Math.round(performance.now() - started),
      ...(answer.kind === 'done' ? parseUsage(answer.text) : {}),
    };
    const result = answer.kind === 'failed' ? { ...answer.failure, call } : read(answer, ctx, call);
    if (result.kind === 'advice') o.breaker.success(circuit);
    else o.breaker.failure(circuit, (o.now ?? Date.now)());
    return result;
  }

  async #call(
    endpoint: string,
    apiKey: string | undefined,
    model: string,
    shapeKey: string,
    ctx: AdviceContext,
    timeoutMs: number,
  ): Promise<
    | { readonly kind: 'done'; readonly status: number; readonly text: string }
    | { readonly kind: 'failed'; readonly failure: AdviceResult & { kind: 'fallback' } }
  > {
    const signal = AbortSignal.timeout(timeoutMs);
    const maxBytes = this.#o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const failed = (reason: LLMFailureReason, message: string) =>
      ({ kind: 'failed', failure: fallback(reason, message) }) as const;
    const now = this.#o.now ?? Date.now;
    let shape = this.#shapes.shape(shapeKey, now());
    let status = 0;
    let text = '';
    // At most one retry per refused field: token-limit names, temperature, each format step.
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        const res = await fetch(endpoint, {
          method: 'POST',
          redirect: 'error',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}),
          },
          body: JSON.stringify(chatRequest(model, ctx, shape)),
          signal,
        });
        status = res.status;
        const read = await readBounded(res.body, maxBytes);
        if (read === undefined)
          return failed(
            'LLMResponseTooLarge',
            `${endpoint} answered with more than ${maxBytes} bytes; the answer was not read`,
          );
        text = read;
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        if (e.name === 'TimeoutError')
          return failed('LLMTimeout', `${endpoint} did not answer within ${timeoutMs / 1000}s`);
        return failed('LLMUnreachable', `${endpoint} unreachable (${e.cause?.code ?? e.message})`);
      }
      const next = adjustShape(status, text, shape);
      if (next === undefined) break;
      shape = next;
      // What the server refused is known now, whatever the retry meets: a retry that times
      // out on a loaded server must not send the next call back to the refused shape.
      this.#shapes.learn(shapeKey, shape, now());
    }
    this.#shapes.learn(shapeKey, shape, now());
    return { kind: 'done', status, text };
  }
}

/** The advice in a server's answer, or why there is none; `call` recorded either way. */
function read(
  answer: { readonly status: number; readonly text: string },
  ctx: AdviceContext,
  call: v2.DecisionLLMCall,
): AdviceResult {
  const parsed = parseCompletion(answer.status, answer.text, ctx.allowedActions);
  return parsed.ok
    ? { kind: 'advice', advice: parsed.advice, call }
    : { kind: 'fallback', reason: parsed.reason, message: parsed.message, call };
}

function fallback(reason: LLMFailureReason, message: string): AdviceResult & { kind: 'fallback' } {
  return { kind: 'fallback', reason, message };
}
