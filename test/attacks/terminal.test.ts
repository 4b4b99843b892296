// Attack on the on-call terminal: a tenant writes escape sequences into every
// field `kubectl aiops` prints — spec.trigger.query, llm.model, status and condition
// messages, a decision's reason, an Event note, the holder of a Lease, a kept generation's
// spec, a label value of the metric `simulate` reads from a real Prometheus, an AITask file's
// name — and an engineer runs every command in every output format through the real kubectl.
// Nothing it prints may carry a raw ESC, BEL, other C0 control but newline/tab, C1 control,
// bidi override/isolate or line separator: they appear as escapes (`\x1b`, `\u202e`), and JSON
// output still parses to the exact values. Runs on the shared harness cluster; no operator.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { buildRevision } from '../../api/revisions.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { Resources } from '../../plugin/kinds.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../support/kubectl-run.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import { startDataPrometheus } from '../support/prometheus-data.ts';
import { deployment } from '../support/workloads.ts';

/** Clear screen, OSC 52 clipboard write, OSC 8 link, BEL, CSI as C1, bidi override and isolate, NEL, LS. */
const PAYLOAD =
  '\u001b[2J\u001b[H\u001b]52;c;cm0gLXJmIH4K\u0007\u001b]8;;http://evil.example/\u001b\\ok\u001b]8;;\u001b\\' +
  '\u009b31m\u009d0;title\u009c\u202egnp.exe\u202c\u2066x\u2069\u0085\u2028\r\nPhase: Healed';

/** The palette's own colour codes (`--color always`): the only escape sequences allowed. */
const ESC = '\u001b';
const PALETTE = new RegExp(`${ESC}\\[(?:1|2|22|31|32|33|36|39)m`, 'g');

/** A raw terminal control in `text` (the palette's colours aside), or undefined. */
function rawControl(output: string): string | undefined {
  const text = output.replace(PALETTE, '');
  const m = /[^\P{Cc}\n\t]|[\u202a-\u202e\u2066-\u2069\u2028\u2029]/u.exec(text);
  return m === null
    ? undefined
    : `U+${(m[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0')} at ${m.index}`;
}

let PATH = '';
let KC = '';
const run = (args: readonly string[]): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC });

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

const spec = (query: string): v2.Spec => ({
  target: { kind: 'Deployment', name: 'web' },
  trigger: { query, threshold: 0.8 },
  remediation: { action: 'ScaleUp' },
  decision: { mode: 'LLM', llm: { endpoint: 'http://127.0.0.1:1/v1/chat/completions', model: PAYLOAD } },
  approval: 'Manual',
});

void test('no command prints a raw control character a tenant wrote, in any output format', async (t) => {
  const ns = await freshNamespace('attack-terminal', (fn) => t.after(fn));
  const transport = await testTransport();
  const tasks = await testAITasks('v2');
  await new ResourceClient(transport, Resources.deployments).create(ns, deployment('web', 1));
  const created = await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'evil' },
    spec: spec(`up{x="1"} # ${PAYLOAD}`),
  });
  await new ResourceClient(transport, Resources.controllerRevisions).create(ns, buildRevision(created));
  const task = await tasks.patch(ns, 'evil', { spec: { trigger: { query: `up # v2 ${PAYLOAD}` } } });
  const decision: v2.DecisionRecord = {
    id: 'd-terminal',
    action: 'ScaleUp',
    source: 'llm',
    reason: PAYLOAD,
    executed: false,
    blockedBy: 'AwaitingApproval',
    at: '2026-01-01T00:00:00Z',
    generation: 2,
    target: { namespace: ns, name: 'web' },
    effect: { fromReplicas: 1, replicas: 2 },
  };
  await tasks.replaceStatus({
    ...task,
    status: {
      phase: 'AwaitingApproval',
      message: PAYLOAD,
      observedGeneration: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'AwaitingApproval',
          message: PAYLOAD,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      lastDecision: { ...decision, id: 'd-before', blockedBy: 'DryRun' },
      pendingDecision: decision,
    },
  });
  await new ResourceClient(transport, Resources.coreEvents).create(ns, {
    metadata: { name: 'evil.note' },
    involvedObject: {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      name: 'evil',
      namespace: ns,
      uid: task.metadata.uid,
    },
    reason: 'Breached',
    message: PAYLOAD,
    type: 'Normal',
    count: 1,
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:00:00Z',
    source: { component: PAYLOAD.slice(0, 40) },
  });
  await new ResourceClient(transport, Resources.leases).create(ns, {
    metadata: { name: 'terminal-leader', namespace: ns },
    spec: {
      holderIdentity: PAYLOAD,
      leaseDurationSeconds: 15,
      renewTime: new Date().toISOString().replace('Z', '000Z'),
    },
  });

  const commands: string[][] = [
    ['describe', 'evil'],
    ['describe'],
    ['explain-phase', 'evil'],
    ['explain-phase'],
    ['generation-diff', 'evil', '1', '2'],
    ['generation-diff', 'evil'],
    ['force-finalize', 'evil', '--lease-namespace', ns, '--lease-name', 'terminal-leader'],
    ['approve', 'evil', '--id', 'not-the-one'],
  ];
  for (const args of commands)
    for (const output of ['table', 'wide', 'json', 'yaml']) {
      const r = await run([...args, '-n', ns, '-o', output, '--color', 'always']);
      const what = `${args.join(' ')} -o ${output} (exit ${r.code})`;
      assert.ok(r.code !== 2, `${what}: ${r.stderr}`);
      assert.equal(rawControl(r.stdout), undefined, `${what} stdout: ${JSON.stringify(r.stdout)}`);
      assert.equal(rawControl(r.stderr), undefined, `${what} stderr: ${JSON.stringify(r.stderr)}`);
      if (output === 'json' && r.code === 0) assert.doesNotThrow(() => JSON.parse(r.stdout), what);
    }
  const shown = await run(['describe', 'evil', '-n', ns]);
  assert.match(shown.stdout, /\\x1b\[2J/);
  assert.match(shown.stdout, /\\u202egnp\.exe/);
  assert.doesNotMatch(shown.stdout, /^Phase: +Healed/m, 'a tenant newline forged a line');
  const json = await run(['describe', 'evil', '-n', ns, '-o', 'json']);
  assert.equal((JSON.parse(json.stdout) as { message: string }).message, PAYLOAD);
  const approved = await run(['approve', 'evil', '-n', ns, '--id', 'd-terminal']);
  assert.equal(approved.code, 0, approved.stderr);
  assert.equal(rawControl(approved.stdout), undefined, JSON.stringify(approved.stdout));
});

void test('simulate prints no raw control character from a query, a label, a Prometheus answer or a file', async (t) => {
  const ns = await freshNamespace('attack-terminal-sim', (fn) => t.after(fn));
  const prometheus = await startDataPrometheus();
  t.after(() => prometheus.stop());
  // An hour of 15 s samples, a breach in its middle, on a series whose label carries the payload.
  const start = Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000;
  const samples: [number, number][] = [];
  for (let ms = start; ms <= start + 3_600_000; ms += 15_000)
    samples.push([ms, ms >= start + 1_200_000 && ms < start + 1_500_000 ? 0.95 : 0.2]);
  await prometheus.write([
    { labels: { __name__: 'demo_load', namespace: ns, deployment: 'web', evil: PAYLOAD }, samples },
  ]);
  // A comment would end at the payload's own newline and leave invalid PromQL behind it.
  const query = `max by (evil) (demo_load{evil=${JSON.stringify(PAYLOAD)}})`;
  const evil: v2.Spec = {
    target: { kind: 'Deployment', name: 'web' },
    intervalSeconds: 60,
    trigger: { query, threshold: 0.8, forSeconds: 60 },
    remediation: { action: 'ScaleUp', cooldownSeconds: 600, maxAttempts: 1 },
  };
  await (
    await testAITasks('v2')
  ).create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'evil' },
    spec: evil,
  });
  const dir = mkdtempSync(join(tmpdir(), 'aiops-terminal-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'task.yaml');
  const named = { name: `x${PAYLOAD}`, namespace: ns, labels: { evil: PAYLOAD } };
  writeFileSync(
    file,
    JSON.stringify({ apiVersion: 'aiops.example.com/v2', kind: 'AITask', metadata: named, spec: evil }),
  );
  const window = ['--from', new Date(start).toISOString(), '--to', new Date(start + 3_600_000).toISOString()];
  const url = ['--prometheus-url', prometheus.url, '--replicas', '1'];
  const runs: string[][] = [
    ['simulate', 'evil', ...window, ...url],
    ['simulate', '-f', file, ...window, ...url],
    // Prometheus' own error, which quotes the query.
    ['simulate', 'evil', ...window, '--prometheus-url', `${prometheus.url}/api/v1/${PAYLOAD}`],
    ['simulate', 'evil', ...window, '--prometheus-service', `${ns}/${PAYLOAD}:9090`],
  ];
  for (const args of runs)
    for (const output of ['table', 'json', 'yaml']) {
      const r = await run([...args, '-n', ns, '-o', output, '--color', 'always']);
      const what = `${args.slice(0, 3).join(' ')} -o ${output} (exit ${r.code})`;
      assert.equal(rawControl(r.stdout), undefined, `${what} stdout: ${JSON.stringify(r.stdout)}`);
      assert.equal(rawControl(r.stderr), undefined, `${what} stderr: ${JSON.stringify(r.stderr)}`);
      if (output === 'json' && r.code === 0) assert.doesNotThrow(() => JSON.parse(r.stdout), what);
    }
  const shown = await run(['simulate', 'evil', '-n', ns, ...window, ...url]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(
    shown.stdout,
    /^Would do: +1 ScaleUp /m,
    'the summary, the chart and the timeline were printed',
  );
  assert.match(
    shown.stdout,
    /^Query: .*\\(x1b|u001b)\[2J/m,
    `the query, its escapes visible: ${shown.stdout}`,
  );
  assert.doesNotMatch(shown.stdout, /^Phase: +Healed/m, 'a tenant newline forged a line');
});
