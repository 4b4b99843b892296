// Field mapping between v1alpha1 and the hub (v2), both ways. Plain projections: what
// one side cannot say is left out here and kept by the stash in convert.ts.

import { body, defined, type Body } from './body.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { num, optObj, str } from './errors.ts';

/** v1alpha1 body → hub body. */
export function liftV1alpha1(spoke: Body): Body {
  const s = spoke.spec;
  const target = str(s, 'target', 'spec');
  const slash = target.indexOf('/');
  const interval = typeof s['interval'] === 'string' ? parseDuration(s['interval']) : undefined;
  const llm = s['llmEndpoint'];
  const spec = defined({
    target: defined({
      kind: 'Deployment',
      name: slash >= 0 ? target.slice(slash + 1) : target,
      namespace: slash >= 0 ? target.slice(0, slash) : undefined,
    }),
    trigger: { threshold: num(s, 'threshold', 'spec') / 100 },
    remediation: { action: str(s, 'action', 'spec') },
    intervalSeconds: interval,
    decision: typeof llm === 'string' ? { mode: 'LLM', llm: { endpoint: llm } } : undefined,
  });
  const st = spoke.status;
  return body(spec, st === undefined ? undefined : defined({ phase: st['phase'], message: st['message'] }));
}

/** Hub body → v1alpha1 body. */
export function projectV1alpha1(hub: Body): Body {
  const h = hub.spec;
  const target = optObj(h, 'target', 'spec') ?? {};
  const name = str(target, 'name', 'spec.target');
  const ns = target['namespace'];
  const trigger = optObj(h, 'trigger', 'spec') ?? {};
  const remediation = optObj(h, 'remediation', 'spec') ?? {};
  const decision = optObj(h, 'decision', 'spec');
  const llm = decision?.['mode'] === 'LLM' ? optObj(decision, 'llm', 'spec.decision') : undefined;
  const interval = h['intervalSeconds'];
  const spec = defined({
    target: typeof ns === 'string' && ns !== '' ? `${ns}/${name}` : name,
    threshold: Math.min(100, Math.max(0, Math.round(num(trigger, 'threshold', 'spec.trigger') * 100))),
    action: str(remediation, 'action', 'spec.remediation'),
    interval: typeof interval === 'number' ? formatDuration(interval) : undefined,
    llmEndpoint: llm?.['endpoint'],
  });
  const st = hub.status;
  return body(spec, st === undefined ? undefined : defined({ phase: st['phase'], message: st['message'] }));
}
