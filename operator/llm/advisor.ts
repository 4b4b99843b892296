// The LLM advisor's I/O edge: checks the allow-list, API key, circuit breaker and call
// budget (policy.ts), POSTs the redacted context to the chat-completions endpoint with a
// timeout and without following redirects, and reads the answer (protocol.ts). It never
// throws: every problem is a fallback with a specific reason, and the rules decide.

import type * as v2 from '../../api/schema/v2.ts';
import { endpointAllowed, type AllowRule, type CallBudget, type CircuitBreaker } from './policy.ts';
import {
  chatRequest,
  parseCompletion,
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
   * call and sent as `Authorization: Bearer`; undefined: no key is sent.
   */
  readonly apiKeyEnv?: string;
  /** Model when `llm.model` is unset (`--llm-default-model`). */
  readonly defaultModel: string;
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

  constructor(opts: AdvisorOptions) {
    this.#o = opts;
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
        `${endpoint} is not in the operator's --llm-endpoint-allowlist; it was not contacted`,
      );
    let apiKey: string | undefined;
    if (o.apiKeyEnv !== undefined) {
      apiKey = (o.env ?? process.env)[o.apiKeyEnv];
      if (apiKey === undefined || apiKey === '')
        return fallback('LLMNoAPIKey', `the operator's env var ${o.apiKeyEnv} (--llm-api-key-env) is empty`);
    }
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
    let status: number;
    let text: string;
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        redirect: 'error',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(chatRequest(model, ctx)),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      if (e.name === 'TimeoutError')
        return fallback('LLMTimeout', `${endpoint} did not answer within ${timeoutMs / 1000}s`);
      return fallback('LLMUnreachable', `${endpoint} unreachable (${e.cause?.code ?? e.message})`);
    }
    const parsed = parseCompletion(status, text, ctx.allowedActions);
    return parsed.ok ? { kind: 'advice', advice: parsed.advice } : fallback(parsed.reason, parsed.message);
  }
}

function fallback(reason: LLMFailureReason, message: string): AdviceResult {
  return { kind: 'fallback', reason, message };
}
