// The text form of `kubectl aiops describe`: kubectl-describe layout (aligned "Key: value"
// lines, indented tables), coloured only through the palette it is given; every string of
// the view is shown through `visible`, so tenant text adds no line, column or control. Pure.

import type { DecisionRecord } from '../api/schema/v2.ts';
import { builtinKind, targetApiVersion, targetTypeName } from '../api/schema/target.ts';
import type { DescribeView } from './describe-view.ts';
import { orDefault } from './describe-view.ts';
import { age, table, visibleDeep, type Palette } from './format.ts';

/** Colours a phase by what it means to an on-call engineer. */
export function phaseColor(phase: string, pal: Palette): string {
  if (phase === 'Failed') return pal.red(phase);
  if (phase === 'Healing' || phase === 'AwaitingApproval' || phase === 'Pending') return pal.yellow(phase);
  if (phase === 'Paused') return pal.dim(phase);
  return pal.green(phase);
}

function when(time: string | undefined, now: Date): string {
  return time === undefined ? '<unknown>' : `${time} (${age(time, now)} ago)`;
}

function decisionLine(d: DecisionRecord, now: Date, pal: Palette): string {
  const metric =
    d.metricValue !== undefined ? `, metric ${d.metricValue} vs threshold ${d.threshold ?? '?'}` : '';
  const outcome =
    d.blockedBy !== undefined
      ? pal.yellow(`blocked by ${d.blockedBy}`)
      : d.executed === true
        ? pal.green('executed')
        : 'not executed yet';
  return `${d.action} by ${d.source} at ${when(d.at, now)}${metric}: ${outcome}\n${' '.repeat(4)}${d.reason} (id ${d.id})`;
}

function scaleText(v: DescribeView): string {
  const s = v.remediation.scale;
  if (s === undefined) return '';
  const parts = [`step ${s.step ?? 1}`];
  if (s.minReplicas !== undefined) parts.push(`min ${s.minReplicas}`);
  if (s.maxReplicas !== undefined) parts.push(`max ${s.maxReplicas}`);
  return ` (${parts.join(', ')} replicas)`;
}

/** `Type ns/name` (targetTypeName: "StatefulSet", "Shard.example.com"). */
function targetText(v: DescribeView): string {
  return `${targetTypeName(v.target)} ${v.target.namespace}/${v.target.name}`;
}

/** `Kind ns/name: 2/3 ready, …` for the target as read, by its kind. */
function healthText(v: DescribeView, pal: Palette): string {
  const h = v.targetHealth;
  const ref = targetText(v);
  if (!h.found) return pal.red(`${ref} ${h.error ?? 'not found'}`);
  if (h.kind === 'Scale') {
    const current = (h.current < h.desired ? pal.yellow : pal.green)(`${h.current}/${h.desired} current`);
    return `${ref}: ${current}, selector ${h.selector ?? '<none>'}; ${pal.yellow(`rollout ${h.rollout.state}`)}: ${h.rollout.message}`;
  }
  const ready = (h.ready < h.desired ? pal.yellow : pal.green)(`${h.ready}/${h.desired} ready`);
  if (h.kind === 'Deployment')
    return `${ref}: ${ready}, ${h.updated} updated, ${h.available} available${h.conditions.length ? `; ${h.conditions.join(', ')}` : ''}`;
  const r = h.rollout;
  const state = (r.state === 'complete' ? pal.green : pal.yellow)(`rollout ${r.state}`);
  return `${ref}: ${ready}, ${h.current} current, ${h.updated} updated, ${h.available} available; ${state}: ${r.message}`;
}

/** Renders one AITask; `wide` adds the observed generation of conditions and Event origins. */
export function renderDescribe(view: DescribeView, now: Date, pal: Palette, wide: boolean): string {
  const v = visibleDeep(view);
  const lines: [string, string][] = [];
  const add = (k: string, value: string): void => void lines.push([k, value]);
  add('Name', v.name);
  add('Namespace', v.namespace);
  add('Created', when(v.created, now));
  if (v.deletionTimestamp !== undefined) add('Deletion Requested', pal.red(when(v.deletionTimestamp, now)));
  add(
    'Target',
    `${targetText(v)}${builtinKind(v.target) === undefined ? ` (apiVersion ${targetApiVersion(v.target)})` : ''}${v.target.namespaceFrom === 'aitask' ? " (the AITask's namespace)" : ''}`,
  );
  const t = v.trigger;
  add(
    'Trigger',
    `${t.query ?? "(the operator's default query)"} ${t.operator} ${t.threshold}${t.forSeconds ? ` for ${t.forSeconds}s` : ''}`,
  );
  add(
    'Remediation',
    `${v.remediation.action}${scaleText(v)}; cooldown ${orDefault(v.remediation.cooldownSeconds, 'cooldownSeconds', 's')}; max attempts ${orDefault(v.remediation.maxAttempts, 'maxAttempts')}`,
  );
  const llm = v.decision.llm;
  add(
    'Decision',
    llm ? `${v.decision.mode} (${llm.endpoint}${llm.model ? `, model ${llm.model}` : ''})` : v.decision.mode,
  );
  add('Interval', orDefault(v.intervalSeconds, 'intervalSeconds', 's'));
  add('Safety', `dryRun=${v.safety.dryRun} paused=${v.safety.paused} approval=${v.safety.approval}`);
  add(
    'Phase',
    `${phaseColor(v.phase, pal)}${v.phaseSince ? `, last transition ${when(v.phaseSince, now)}` : ''}`,
  );
  if (v.message !== undefined) add('Message', v.message);
  const k = v.kstatus;
  add(
    'Status',
    `${k.status === 'Failed' ? pal.red(k.status) : k.status === 'Current' ? pal.green(k.status) : pal.yellow(k.status)} (${k.reason}): ${k.message}`,
  );
  const obs = v.observedGeneration;
  add(
    'Generation',
    `${v.generation}, observed ${obs ?? '<none>'}${obs === v.generation ? ' (in sync)' : pal.yellow(' (lagging: see kubectl aiops generation-diff)')}`,
  );
  add('Attempts', String(v.attempts));
  add('Cordoned Nodes', v.cordonedNodes.length ? v.cordonedNodes.join(', ') : '<none>');
  add('Finalizers', v.finalizers.length ? v.finalizers.join(', ') : '<none>');
  if (v.lastExecutionTime !== undefined) add('Last Execution', when(v.lastExecutionTime, now));
  add('Last Decision', v.lastDecision ? decisionLine(v.lastDecision, now, pal) : '<none>');
  add('Pending Decision', v.pendingDecision ? decisionLine(v.pendingDecision, now, pal) : '<none>');
  add('Target Health', healthText(v, pal));
  const width = Math.max(...lines.map(([key]) => key.length)) + 2;
  let out = lines.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`).join('\n') + '\n';
  out += 'Conditions:\n';
  out += v.conditions.length
    ? table(
        ['Type', 'Status', 'Reason', 'Age', ...(wide ? ['Observed Gen'] : []), 'Message'],
        v.conditions.map((c) => [
          c.type,
          c.status === 'Unknown' ? pal.yellow(c.status) : c.status,
          c.reason,
          age(c.lastTransitionTime, now),
          ...(wide ? [String(c.observedGeneration ?? '')] : []),
          c.message,
        ]),
        '  ',
      )
    : '  <none>\n';
  out += 'Events:\n';
  out += v.events.length
    ? table(
        ['Last Seen', 'Type', 'Reason', ...(wide ? ['First Seen', 'From'] : []), 'Count', 'Message'],
        v.events.map((e) => [
          age(e.lastSeen, now),
          e.type === 'Warning' ? pal.yellow(e.type) : e.type,
          e.reason,
          ...(wide ? [age(e.firstSeen, now), e.from] : []),
          String(e.count),
          e.message,
        ]),
        '  ',
      )
    : '  <none>\n';
  return out;
}
