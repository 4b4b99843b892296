// What the LLM advisor's tests share: the context every request describes, the advice the
// stand-in server answers with, a registry of stand-in servers closed when the file ends,
// and an Advisor with generous budgets whose allow-list, default model and API key each
// test file chooses.

import { Advisor, type AdvisorOptions } from '../../operator/llm/advisor.ts';
import { CallBudget, CircuitBreaker, parseAllowlist } from '../../operator/llm/policy.ts';
import type { AdviceContext } from '../../operator/llm/protocol.ts';
import { startLLMServer, type LLMReply, type LLMServer, type LLMServerOptions } from './llm-server.ts';

/** A breaching ScaleUp candidate: 5 against a threshold of 1 for 120 s, 2 of 2 replicas ready. */
export const ADVICE_CONTEXT: AdviceContext = {
  allowedActions: ['ScaleUp', 'Noop'],
  metric: { value: 5, threshold: 1, operator: 'GreaterThan', breachSeconds: 120 },
  target: { kind: 'Deployment', replicas: 2, readyReplicas: 2, availableReplicas: 2 },
  attempts: 0,
  maxAttempts: 3,
  recentEventReasons: {},
};

/** The advice the stand-in answers with unless a test scripts another reply. */
export const ADVICE = { action: 'ScaleUp', confidence: 0.7, reason: 'load' };

/** Starts stand-in servers and closes every one of them at `closeAll` (register it with `after`). */
export function llmServers(): {
  start: (reply?: LLMReply, opts?: LLMServerOptions) => Promise<LLMServer>;
  closeAll: () => Promise<void>;
} {
  const started: LLMServer[] = [];
  return {
    start: async (reply = { json: ADVICE }, opts = {}) => {
      const s = await startLLMServer(reply, opts);
      started.push(s);
      return s;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((s) => s.close()));
    },
  };
}

/**
 * An Advisor allowed to call `allowlist` (comma-separated hosts), with budgets of 100 calls
 * and a breaker opening after 3 failures, whose API key `key` comes from
 * AIOPS_LLM_API_KEY; `extra` overrides any option.
 */
export function testAdvisor(
  setup: { readonly allowlist: string; readonly defaultModel: string; readonly key: string },
  extra: Partial<AdvisorOptions> = {},
): Advisor {
  return new Advisor({
    allowlist: parseAllowlist(setup.allowlist),
    budget: new CallBudget(100, 100),
    breaker: new CircuitBreaker(3, 60_000),
    defaultModel: setup.defaultModel,
    env: { AIOPS_LLM_API_KEY: setup.key },
    apiKeyEnv: 'AIOPS_LLM_API_KEY',
    ...extra,
  });
}
