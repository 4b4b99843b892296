// Field mapping between v1 and the hub (v2), both ways. Plain projections: what one
// side cannot say is left out here and kept by the stash in convert.ts.

import { PHASES as V1_PHASES } from '../schema/v1.ts';
import { body, defined, type Body } from './body.ts';
import { num, optObj, str } from './errors.ts';

const TO_HUB_ACTION: Record<string, string> = {
  restart_pod: 'RestartPod',
  scale_up: 'ScaleUp',
  scale_down: 'ScaleDown',
  cordon_node: 'CordonNode',
  noop: 'Noop',
};
const FROM_HUB_ACTION: Record<string, string> = Object.fromEntries(
  Object.entries(TO_HUB_ACTION).map(([k, v]) => [v, k]),
);

/** How hub-only phases read in v1, which lacks them. */
const V1_PHASE_OF: Record<string, string> = { Paused: 'Monitoring', AwaitingApproval: 'Healing' };

/** v1 body → hub body. */
export function liftV1(spoke: Body): Body {
  const s = spoke.spec;
  const action = str(s, 'action', 'spec');
  const llm = s['llmEndpoint'];
  const spec = defined({
    target: defined({
      kind: 'Deployment',
      name: str(s, 'targetDeployment', 'spec'),
      namespace: s['namespace'],
    }),
    trigger: { threshold: num(s, 'threshold', 'spec') },
    remediation: { action: TO_HUB_ACTION[action] ?? action },
    intervalSeconds: s['intervalSeconds'],
    decision: typeof llm === 'string' ? { mode: 'LLM', llm: { endpoint: llm } } : undefined,
  });
  const st = spoke.status;
  if (st === undefined) return body(spec, undefined);
  return body(
    spec,
    defined({
      phase: st['phase'],
      lastExecutionTime: st['lastExecutionTime'],
      observedGeneration: st['observedGeneration'],
      conditions: st['conditions'],
    }),
  );
}

/** Hub body → v1 body. */
export function projectV1(hub: Body): Body {
  const h = hub.spec;
  const target = optObj(h, 'target', 'spec') ?? {};
  const trigger = optObj(h, 'trigger', 'spec') ?? {};
  const remediation = optObj(h, 'remediation', 'spec') ?? {};
  const decision = optObj(h, 'decision', 'spec');
  const llm = decision?.['mode'] === 'LLM' ? optObj(decision, 'llm', 'spec.decision') : undefined;
  const action = str(remediation, 'action', 'spec.remediation');
  const spec = defined({
    targetDeployment: str(target, 'name', 'spec.target'),
    namespace: target['namespace'],
    threshold: Math.max(0, num(trigger, 'threshold', 'spec.trigger')),
    action: FROM_HUB_ACTION[action] ?? action,
    intervalSeconds: h['intervalSeconds'],
    llmEndpoint: llm?.['endpoint'],
  });
  const st = hub.status;
  if (st === undefined) return body(spec, undefined);
  const phase = st['phase'];
  const last = optObj(st, 'lastDecision', 'status');
  return body(
    spec,
    defined({
      phase:
        typeof phase === 'string' && !(V1_PHASES as readonly string[]).includes(phase)
          ? (V1_PHASE_OF[phase] ?? phase)
          : phase,
      lastDecision: last === undefined ? undefined : describeDecision(last),
      lastExecutionTime: st['lastExecutionTime'],
      observedGeneration: st['observedGeneration'],
      conditions: st['conditions'],
    }),
  );
}

/** The v1 one-line rendering of a structured v2 decision record. */
function describeDecision(d: Record<string, unknown>): string {
  const action = typeof d['action'] === 'string' ? (FROM_HUB_ACTION[d['action']] ?? d['action']) : 'unknown';
  const how =
    d['executed'] === true
      ? 'executed'
      : typeof d['blockedBy'] === 'string'
        ? `blocked by ${d['blockedBy']}`
        : 'not executed';
  const reason = typeof d['reason'] === 'string' ? `: ${d['reason']}` : '';
  const source = typeof d['source'] === 'string' ? d['source'] : 'rules';
  return `${action} (${source}, ${how})${reason}`;
}
