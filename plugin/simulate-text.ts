// What `kubectl aiops simulate` prints: the view of a replay (decision/replay.ts) as one
// document, which `-o json|yaml` prints as it is, and its text for people: the summary (the
// rules replayed, the actions of each kind with the first and last, when the task would have
// reached Failed, what waited), one line saying the metric is replayed as recorded, and the
// timeline of the changes with a line counting those left out. Pure.

import type * as v2 from '../api/schema/v2.ts';
import { clampSpec } from '../operator/decision/clamp.ts';
import { DEFAULTS } from '../operator/decision/decide.ts';
import type { Change, Decision, Replay } from '../operator/decision/replay.ts';
import { table, type Palette } from './format.ts';

/** The line every simulation carries: the replay cannot know how the metric would have answered. */
export const REPLAY_NOTE =
  'The recorded metric is replayed as it was: the simulator cannot know how the metric would have answered these actions.';

/** One change of the timeline, as printed. */
export interface ChangeView {
  readonly time: string;
  /** Absent when there was no sample. */
  readonly value?: number;
  readonly phase: v2.Phase;
  /** The decision in words ("ScaleUp 2 → 3", "would wait for approval: …"). */
  readonly decision: string;
  readonly verdict: Decision;
  readonly replicas: number;
}

/** A simulation as `-o json|yaml` prints it. */
export interface SimulationView {
  readonly task: { readonly namespace: string; readonly name: string; readonly from: string };
  readonly window: { readonly from: string; readonly to: string; readonly stepSeconds: number };
  readonly prometheus: string;
  readonly query: string;
  readonly samples: number;
  readonly summary: {
    readonly evaluations: number;
    readonly actions: Readonly<Partial<Record<v2.Action, number>>>;
    readonly firstAction?: string;
    readonly lastAction?: string;
    readonly failedAt?: string;
    readonly awaitingApproval: number;
    readonly dryRuns: number;
    readonly noData: number;
    readonly replicas: { readonly start: number; readonly end: number };
  };
  readonly changes: readonly ChangeView[];
  /** Changes left out of `changes` (the timeline's cap). */
  readonly omitted: number;
  readonly note: string;
}

/** `ms` as an RFC 3339 time to the second. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The decision of a change in words. */
export function decisionText(d: Decision): string {
  const plan = d.plan ?? '';
  switch (d.would) {
    case 'askAdvisor':
      return `would ask the advisor (rules: ${plan})`;
    case 'waitForApproval':
      return `would wait for approval: ${plan}`;
    case 'runDry':
      return `dry run: ${plan}`;
    default:
      break;
  }
  switch (d.kind) {
    case 'act':
      return plan;
    case 'blocked':
      return `blocked: ${d.blockedBy ?? ''}`;
    case 'healthy':
      return 'within threshold';
    case 'breachPending':
      return 'breach, holding for forSeconds';
    case 'stalled':
      return 'maxAttempts reached';
    case 'metricUnavailable':
      return 'no data';
    case 'paused':
      return 'paused';
    case 'targetMissing':
      return 'target missing';
  }
}

function changeView(c: Change): ChangeView {
  return {
    time: rfc3339(c.at),
    ...(c.value !== undefined ? { value: c.value } : {}),
    phase: c.phase,
    decision: decisionText(c.decision),
    verdict: c.decision,
    replicas: c.replicas,
  };
}

/** What the view is built from besides the replay. */
export interface SimulationInput {
  readonly task: Pick<v2.AITask, 'metadata' | 'spec'>;
  /** Where the task came from: `cluster`, or the file's path. */
  readonly from: string;
  readonly window: { readonly from: number; readonly to: number };
  readonly stepMs: number;
  readonly prometheus: string;
  readonly query: string;
  readonly samples: number;
}

/** The document of a simulation (what `-o json|yaml` prints). */
export function simulationView(input: SimulationInput, r: Replay): SimulationView {
  const s = r.summary;
  const at = (ms: number | undefined) => (ms !== undefined ? rfc3339(ms) : undefined);
  const firstAction = at(s.firstAction);
  const lastAction = at(s.lastAction);
  const failedAt = at(s.failedAt);
  return {
    task: {
      namespace: input.task.metadata.namespace ?? '',
      name: input.task.metadata.name ?? '',
      from: input.from,
    },
    window: {
      from: rfc3339(input.window.from),
      to: rfc3339(input.window.to),
      stepSeconds: input.stepMs / 1000,
    },
    prometheus: input.prometheus,
    query: input.query,
    samples: input.samples,
    summary: {
      evaluations: s.evaluations,
      actions: s.actions,
      ...(firstAction !== undefined ? { firstAction } : {}),
      ...(lastAction !== undefined ? { lastAction } : {}),
      ...(failedAt !== undefined ? { failedAt } : {}),
      awaitingApproval: s.awaitingApproval,
      dryRuns: s.dryRuns,
      noData: s.noData,
      replicas: s.replicas,
    },
    changes: r.changes.map(changeView),
    omitted: r.omitted,
    note: REPLAY_NOTE,
  };
}

/** A value for people: at most 4 significant digits. */
function num(v: number): string {
  return String(Number(v.toPrecision(4)));
}

/** The rules replayed, in one line: trigger, interval, action and its bounds, cooldown, attempts. */
export function rulesLine(spec: v2.Spec, startReplicas: number): string {
  const s = clampSpec(spec);
  const op = (s.trigger.operator ?? 'GreaterThan') === 'LessThan' ? '<' : '>';
  const r = s.remediation;
  const action =
    r.action === 'ScaleUp' || r.action === 'ScaleDown'
      ? `${r.action} by ${r.scale?.step ?? 1} within ${r.scale?.minReplicas ?? DEFAULTS.minReplicas}..${r.scale?.maxReplicas ?? DEFAULTS.maxReplicas} from ${startReplicas} replicas`
      : r.action;
  const modes = [
    s.paused === true ? 'paused' : '',
    s.dryRun === true ? 'dry run' : '',
    s.approval === 'Manual' ? 'manual approval' : '',
    s.decision?.mode === 'LLM' ? 'LLM mode' : '',
  ].filter((m) => m !== '');
  return [
    `${op} ${s.trigger.threshold} for ${s.trigger.forSeconds ?? 0}s, every ${s.intervalSeconds ?? DEFAULTS.intervalSeconds}s`,
    action,
    `cooldown ${r.cooldownSeconds ?? DEFAULTS.cooldownSeconds}s`,
    `at most ${r.maxAttempts ?? DEFAULTS.maxAttempts} attempts`,
    ...modes,
  ].join('; ');
}

/** The text of a simulation for people; `chart` (simulate-chart.ts) goes between the summary and the timeline. */
export function renderSimulation(v: SimulationView, spec: v2.Spec, pal: Palette, chart = ''): string {
  const s = v.summary;
  const days = (Date.parse(v.window.to) - Date.parse(v.window.from)) / 86_400_000;
  const span = days >= 1 ? `${Number(days.toFixed(1))}d` : `${Number((days * 24).toFixed(1))}h`;
  const kinds = Object.entries(s.actions).map(([action, n]) => `${n} ${action}`);
  const lines = [
    `${pal.bold(`AITask ${v.task.namespace}/${v.task.name}`)} replayed over ${v.window.from} → ${v.window.to} (${span}, ${v.samples} sample${v.samples === 1 ? '' : 's'} every ${v.window.stepSeconds}s)`,
    `Query:      ${v.query}`,
    `Rules:      ${rulesLine(spec, s.replicas.start)}`,
    `Would do:   ${
      kinds.length === 0
        ? 'no action'
        : `${kinds.join(', ')} (first ${s.firstAction ?? ''}, last ${s.lastAction ?? ''}); replicas ${s.replicas.start} → ${s.replicas.end}`
    }`,
    `Failed:     ${s.failedAt !== undefined ? pal.red(`at ${s.failedAt} (maxAttempts reached)`) : 'never'}`,
    ...(s.awaitingApproval > 0
      ? [`Waiting:    ${s.awaitingApproval} evaluations would have waited for approval`]
      : []),
    ...(s.dryRuns > 0 ? [`Dry run:    ${s.dryRuns} evaluations would have acted but for dryRun`] : []),
    ...(s.noData > 0 ? [`No data:    ${s.noData} of ${s.evaluations} evaluations found no sample`] : []),
    pal.dim(v.note),
    '',
  ];
  const rows = v.changes.map((c) => [
    c.time,
    c.value !== undefined ? num(c.value) : '-',
    c.phase,
    c.verdict.kind === 'act' ? pal.yellow(c.decision) : c.decision,
    String(c.replicas),
  ]);
  const timeline = table(['time', 'value', 'phase', 'decision', 'replicas'], rows);
  const more =
    v.omitted > 0
      ? `… ${v.omitted} more changes not shown (the timeline keeps the first ${v.changes.length})\n`
      : '';
  return `${lines.join('\n')}\n${chart}${chart !== '' ? '\n' : ''}${timeline}${more}`;
}
