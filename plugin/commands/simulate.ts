// `kubectl aiops simulate NAME | -f FILE`: what an AITask would have done over its metric's
// history. The task comes from the cluster or a file (task-file.ts); the operator's own code
// refuses what the operator would refuse (a target in another namespace, a spec past its
// rules, a query it may not confine: decision/caps.ts, clamp.ts, metric-query.ts); the
// metric is read with range queries (prometheus-range.ts) and replayed by the operator's
// decision functions (decision/replay.ts) from the target's replicas (or --replicas).

import { readFile } from 'node:fs/promises';
import { targetNamespace } from '../../api/schema/target.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { ForbiddenError, NotFoundError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { crossNamespaceRefusal, mayTarget } from '../../operator/decision/caps.ts';
import { brokenRules } from '../../operator/decision/clamp.ts';
import { DEFAULT_QUERY_TEMPLATE, metricQuery } from '../../operator/decision/metric-query.ts';
import { replay, type Replay, type Sample } from '../../operator/decision/replay.ts';
import type { CommandContext } from '../context.ts';
import { CliError, ExitCode, RefusedError, UsageError } from '../errors.ts';
import { parseRequestTimeout } from '../flags.ts';
import { Resources } from '../kinds.ts';
import {
  choosePrometheus,
  describeSource,
  PROMETHEUS_URL_ENV,
  readRange,
  serviceOfUrl,
  type Progress,
  type PrometheusSource,
} from '../prometheus-range.ts';
import { renderChart, type ChartMark } from '../simulate-chart.ts';
import { getTask } from '../session.ts';
import { targetReplicas } from '../target.ts';
import { renderSimulation, simulationView } from '../simulate-text.ts';
import { parseWindow, STEP_MS } from '../simulate-window.ts';
import { taskFromFile } from '../task-file.ts';

/** The flag the operator reads its Prometheus URL from (or PROMETHEUS_URL_ENV). */
const OPERATOR_URL_FLAG = '--prometheus-url=';

interface OperatorDeployment {
  spec?: {
    template?: {
      spec?: { containers?: { args?: string[]; env?: { name: string; value?: string }[] }[] };
    };
  };
}

/** The task to replay: from the cluster by NAME, or from `-f`. */
async function loadTask(
  ctx: CommandContext,
  name: string | undefined,
  file: string | undefined,
): Promise<v2.AITask> {
  if (name !== undefined) {
    const s = await ctx.session();
    return getTask(s, s.namespace, name);
  }
  const path = file ?? '';
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  });
  const task = taskFromFile(text, path);
  const namespace = task.metadata.namespace ?? ctx.namespace ?? (await ctx.session()).namespace;
  return { ...task, metadata: { ...task.metadata, namespace, name: task.metadata.name ?? path } };
}

/**
 * Where Prometheus is, in choosePrometheus' order: `--prometheus-url`, `--prometheus-service`,
 * AIOPS_PROMETHEUS_URL, else the Service the installed operator's Prometheus URL names, when
 * the user may read its Deployment.
 */
async function prometheusSource(
  ctx: CommandContext,
  opts: Record<string, unknown>,
): Promise<PrometheusSource> {
  const choice = choosePrometheus(
    {
      url: opts['prometheusUrl'] as string | undefined,
      service: opts['prometheusService'] as string | undefined,
    },
    ctx.io.env,
  );
  if (choice.kind === 'url') return choice;
  if (choice.kind === 'service')
    return { kind: 'service', service: choice.service, transport: (await ctx.session()).transport };
  const s = await ctx.session();
  const { namespace, deployment } = DEFAULT_INSTALL;
  const hint = `pass --prometheus-service NAMESPACE/NAME:PORT or --prometheus-url, or set ${PROMETHEUS_URL_ENV}`;
  let d: OperatorDeployment;
  try {
    d = await new ResourceClient<OperatorDeployment>(s.transport, Resources.deployments).get(
      namespace,
      deployment,
    );
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof ForbiddenError)
      throw new UsageError(
        `the operator's Prometheus is not known (Deployment ${namespace}/${deployment}: ${err.message}): ${hint}`,
      );
    throw err;
  }
  const containers = d.spec?.template?.spec?.containers ?? [];
  const configured =
    containers
      .flatMap((c) => (c.args ?? []).filter((a) => a.startsWith(OPERATOR_URL_FLAG)))
      .map((a) => a.slice(OPERATOR_URL_FLAG.length))[0] ??
    containers
      .flatMap((c) => (c.env ?? []).filter((e) => e.name === PROMETHEUS_URL_ENV))
      .map((e) => e.value ?? '')[0];
  const found = configured !== undefined ? serviceOfUrl(configured) : undefined;
  if (found === undefined)
    throw new UsageError(
      `the operator's Prometheus URL (Deployment ${namespace}/${deployment}) ${configured === undefined ? 'is not set' : 'names no in-cluster Service'}: ${hint}`,
    );
  return { kind: 'service', service: found, transport: s.transport };
}

/** Runs `simulate`. */
export async function simulate(
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const [name] = args;
  const file = opts['filename'] as string | undefined;
  if (name !== undefined && file !== undefined)
    throw new UsageError('a NAME cannot be combined with -f/--filename');
  if (name === undefined && file === undefined)
    throw new UsageError('give the AITask: NAME, or -f FILE for one not applied yet');
  const window = parseWindow(
    {
      ...(typeof opts['since'] === 'string' ? { since: opts['since'] } : {}),
      ...(typeof opts['from'] === 'string' ? { from: opts['from'] } : {}),
      ...(typeof opts['to'] === 'string' ? { to: opts['to'] } : {}),
    },
    ctx.io.now().getTime(),
  );
  const replicasFlag = opts['replicas'] as number | undefined;
  const deadlineMs = parseRequestTimeout(ctx.globals.requestTimeout);
  const task = await loadTask(ctx, name, file);
  const broken = brokenRules(task.spec);
  if (broken.length > 0)
    throw new RefusedError(
      `the operator would not act on this spec: it breaks its schema's rules: ${broken.join('; ')}`,
    );
  if (!mayTarget(task, false))
    throw new RefusedError(`the operator would refuse this task: ${crossNamespaceRefusal(task)}`);
  const targetNs = targetNamespace(task);
  const query = await metricQuery(task, targetNs, {
    defaultQuery: DEFAULT_QUERY_TEMPLATE,
    confineQueries: true,
  });
  if (!query.ok)
    throw new RefusedError(`the operator would not send the query (${query.reason}): ${query.message}`);
  const source = await prometheusSource(ctx, opts);
  const replicas = replicasFlag ?? (await targetReplicas(await ctx.session(), task));
  const samples = await readRange(source, query.query, window, deadlineMs, progress(ctx));
  if (!samples.some((x) => Number.isFinite(x.value)))
    throw new CliError(
      `no samples of ${query.query} from ${describeSource(source)} between ${new Date(window.from).toISOString()} and ${new Date(window.to).toISOString()}: check the query and Prometheus' retention`,
    );
  // A grid point answers until the next: Prometheus applied its lookback where it computed it.
  const result = replay({
    task,
    samples,
    from: window.from,
    to: window.to,
    replicas,
    lookbackMs: STEP_MS,
  });
  const view = simulationView(
    {
      task,
      from: name !== undefined ? 'cluster' : (file ?? ''),
      window,
      stepMs: STEP_MS,
      prometheus: describeSource(source),
      query: query.query,
      samples: samples.length,
    },
    result,
  );
  if (ctx.machine) ctx.printDoc(view);
  else ctx.io.out(renderSimulation(view, task.spec, ctx.pal, chart(ctx, task.spec, window, samples, result)));
  return ExitCode.Ok;
}

/** Terminal width when stdout is none: `$COLUMNS`, else this. */
const DEFAULT_COLUMNS = 80;

/** The chart of the metric against the threshold, with the actions and the decisions that waited or ran dry. */
function chart(
  ctx: CommandContext,
  spec: v2.Spec,
  window: { from: number; to: number },
  samples: readonly Sample[],
  result: Replay,
): string {
  const marks: ChartMark[] = [
    ...result.actions.map((a) => ({ at: a.at, kind: 'action' as const })),
    ...result.changes.flatMap((c): ChartMark[] =>
      c.decision.would === 'waitForApproval'
        ? [{ at: c.at, kind: 'approval' as const }]
        : c.decision.would === 'runDry'
          ? [{ at: c.at, kind: 'dryRun' as const }]
          : [],
    ),
  ];
  const columns = ctx.io.columns ?? (Number(ctx.io.env['COLUMNS']) || DEFAULT_COLUMNS);
  return renderChart(
    {
      samples,
      ...window,
      threshold: spec.trigger.threshold,
      lessThan: spec.trigger.operator === 'LessThan',
      marks,
      width: columns,
    },
    ctx.pal,
  );
}

/** Progress of a read of more than one range query: a line a query on stderr, when it is a terminal. */
function progress(ctx: CommandContext): Progress | undefined {
  if (ctx.io.errIsTTY !== true) return undefined;
  return (done, of) => {
    if (of > 1) ctx.io.err(`read ${done} of ${of} range queries\n`);
  };
}
