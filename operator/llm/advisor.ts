// The LLM advisor's I/O edge: checks the allow-list, circuit breaker and call budget
// (policy.ts), POSTs the redacted context to the chat-completions endpoint with a
// timeout and without following redirects (with the API key as a Bearer token when one is
// configured, with no Authorization header otherwise: local vLLM and Ollama servers need
// none), and reads the answer (protocol.ts). A server that refuses a request field by
// name is asked again without it, within the same call and timeout, and the shape it
// accepted is kept for that endpoint. It never throws: every problem is a fallback with a
// specific reason, and the rules decide.

import type * as v2 from '../../api/schema/v2.ts';
import { endpointAllowed, type AllowRule, type CallBudget, type CircuitBreaker } from './policy.ts';
import {
  adjustShape,
  chatRequest,
  DEFAULT_MAX_COMPLETION_TOKENS,
  initialShape,
  parseCompletion,
  type RequestShape,
  type Advice,
  type AdviceContext,
  type LLMFailureReason,
} from './protocol.ts';

/** The LLM settings of an AITask (spec.decision.llm). */
export type LLMSpec = NonNullable<NonNullable<v2.Spec['decision']>['llm']>;

/** What the advisor came back with. */
export type AdviceResult =
  | { readonly kind: 'advice'; readonly advice: Advice }
  | { readonly kind: 'fallback'; readonly reason: LLMFailureReason; readonly message: string };

/** Options of Advisor. */
export interface AdvisorOptions {
  /** Endpoints that may be contacted (`--llm-endpoint-allowlist`); empty: none. */
  readonly allowlist: readonly AllowRule[];
  readonly budget: CallBudget;
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
  /** Called once per outcome ('advice' or a failure reason), for the metrics. */
  readonly onOutcome?: (outcome: 'advice' | LLMFailureReason) => void;
  /** Clock in ms (default Date.now). */
  readonly now?: () => number;
  /** Environment the key is read from (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Asks an LLM for advice within the operator's limits. */
export class Advisor {
  readonly #o: AdvisorOptions;
  readonly #initial: RequestShape;
  /** The request shape each endpoint last accepted or was adjusted to. */
  readonly #shapes = new Map<string, RequestShape>();

  constructor(opts: AdvisorOptions) {
    this.#o = opts;
    this.#initial = initialShape(opts.maxCompletionTokens ?? DEFAULT_MAX_COMPLETION_TOKENS, opts.temperature);
  }

  /** Advice for the AITask `key` in `ctx`, or why there is none. Never throws. */
  async advise(key: string, llm: LLMSpec, ctx: AdviceContext): Promise<AdviceResult> {
    const result = await this.#advise(key, llm, ctx);
    this.#o.onOutcome?.(result.kind === 'advice' ? 'advice' : result.reason);
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
    const gate = o.breaker.allow(endpoint, now);
    if (!gate.ok)
      return fallback(
        'LLMCircuitOpen',
        `calls to ${endpoint} are suspended after repeated failures until ${new Date(gate.retryAt).toISOString()}`,
      );
    const refused = o.budget.take(key, now);
    if (refused)
      return fallback(
        'LLMBudgetExhausted',
        `the ${refused.scope === 'task' ? 'per-AITask' : 'operator-wide'} LLM call budget is used up until ${new Date(refused.retryAt).toISOString()}`,
      );
    const timeoutMs =
      llm.timeoutSeconds !== undefined ? llm.timeoutSeconds * 1000 : (o.defaultTimeoutMs ?? 10_000);
    const result = await this.#call(endpoint, apiKey, llm.model ?? o.defaultModel, ctx, timeoutMs);
    if (result.kind === 'advice') o.breaker.success(endpoint);
    else o.breaker.failure(endpoint, (o.now ?? Date.now)());
    return result;
  }

  async #call(
    endpoint: string,
    apiKey: string | undefined,
    model: string,
    ctx: AdviceContext,
    timeoutMs: number,
  ): Promise<AdviceResult> {
    const signal = AbortSignal.timeout(timeoutMs);
    let shape = this.#shapes.get(endpoint) ?? this.#initial;
    let status = 0;
    let text = '';
    // At most one retry per optional field: token-limit name, temperature, JSON mode.
    for (let attempt = 0; attempt < 4; attempt++) {
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
        text = await res.text();
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        if (e.name === 'TimeoutError')
          return fallback('LLMTimeout', `${endpoint} did not answer within ${timeoutMs / 1000}s`);
        return fallback('LLMUnreachable', `${endpoint} unreachable (${e.cause?.code ?? e.message})`);
      }
      const next = adjustShape(status, text, shape);
      if (next === undefined) break;
      shape = next;
    }
    this.#shapes.set(endpoint, shape);
    const parsed = parseCompletion(status, text, ctx.allowedActions);
    return parsed.ok ? { kind: 'advice', advice: parsed.advice } : fallback(parsed.reason, parsed.message);
  }
}

function fallback(reason: LLMFailureReason, message: string): AdviceResult {
  return { kind: 'fallback', reason, message };
}
