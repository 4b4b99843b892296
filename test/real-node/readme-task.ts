// What the README-block suites check after a documented install: the AITask the block waits
// for (`kubectl wait --for=condition=MetricsAvailable aitask/<name> -n <ns>`) reads its metric
// through the Prometheus of `cluster -- up --prometheus`, and, when it does not, what to show
// (the task's conditions, the operator's Pods and their last log lines) so a regression says
// what happened instead of a bare kubectl timeout.
import assert from 'node:assert/strict';
import type { Kubectl } from '../harness/kubectl.ts';

/** An AITask by name and namespace. */
export interface TaskRef {
  readonly name: string;
  readonly namespace: string;
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** The line of `block` that waits for MetricsAvailable, and the task it names; throws when there is none. */
export function waitedTask(block: string): TaskRef & { readonly line: string } {
  const m = /^kubectl wait --for=condition=MetricsAvailable aitask\/(\S+) -n (\S+).*$/m.exec(block);
  if (m === null)
    throw new Error('the block has no `kubectl wait --for=condition=MetricsAvailable aitask/…`');
  return { line: m[0], name: m[1] ?? '', namespace: m[2] ?? '' };
}

/** The task's conditions, as `type=status reason: message` lines. */
function conditionLines(kubectl: Kubectl, task: TaskRef): string[] {
  const obj = JSON.parse(kubectl(['get', 'aitask', task.name, '-n', task.namespace, '-o', 'json'])) as {
    status?: { conditions?: Condition[] };
  };
  return (obj.status?.conditions ?? []).map(
    (c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`,
  );
}

/** Asserts that the task's MetricsAvailable condition is True; the message lists every condition. */
export function assertMetricsAvailable(kubectl: Kubectl, task: TaskRef): void {
  const lines = conditionLines(kubectl, task);
  assert.ok(
    lines.some((l) => l.startsWith('MetricsAvailable=True ')),
    `AITask ${task.namespace}/${task.name} has MetricsAvailable=True; its conditions:\n${lines.join('\n')}`,
  );
}

/**
 * What a failed block leaves to read: the task's conditions, the operator's Pods in
 * `operatorNamespace` and their last 20 log lines. Never throws (each part says why it is missing).
 */
export function diagnostics(kubectl: Kubectl, task: TaskRef, operatorNamespace: string): string {
  const part = (title: string, get: () => string): string => {
    try {
      return `--- ${title}\n${get().trimEnd()}`;
    } catch (err) {
      return `--- ${title}: ${err instanceof Error ? err.message : String(err)}`;
    }
  };
  const selector = 'app.kubernetes.io/name=aiops-operator';
  return [
    part(`AITask ${task.namespace}/${task.name} conditions`, () => conditionLines(kubectl, task).join('\n')),
    part(`operator Pods in ${operatorNamespace}`, () =>
      kubectl(['get', 'pods', '-n', operatorNamespace, '-l', selector, '-o', 'wide']),
    ),
    part('operator logs', () =>
      kubectl(['logs', '-n', operatorNamespace, '-l', selector, '--tail=20', '--prefix']),
    ),
  ].join('\n');
}
