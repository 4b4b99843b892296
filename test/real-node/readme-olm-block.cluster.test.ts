// The README's "With OLM on the local cluster" block (docs/install.md), run as a user types it
// (its own persistent cluster dir): the commands up to `kubectl -n operators get csv` as typed,
// then that line as typed until it shows what the README promises (the CSV Succeeded, and
// stable), then the rest up to `npm run cluster -- down` as typed (a sample AITask and its
// `kubectl wait` for MetricsAvailable: the Subscription's AIOPS_PROMETHEUS_URL reaches the
// Prometheus of `cluster -- up --prometheus`; also asserted on the task's status), then that
// line. Asserted in between: the operator's Pods run on the real node (the cluster has no other
// node they could land on), and the CRD's conversion, configured by OLM, answers through them
// (an AITask created at v1alpha1 reads at v1 and v2). The machine is left as it was found. In
// test/real-node/ so it runs one at a time with the other real-node suites.
import { eventually } from '../harness/wait.ts';
import { kubectlWith } from '../harness/kubectl.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { csvName } from '../../api/releases.ts';
import { olmUnavailable, OPERATORS_NAMESPACE } from '../harness/olm.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { REAL_NODE_NAME } from '../harness/real-node/layout.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { olmViews } from './olm-support.ts';
import { assertMetricsAvailable, diagnostics, waitedTask } from './readme-task.ts';
import { machineBeforeNode, machineSnapshot, readmeShBlock } from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir()) ?? olmUnavailable(defaultBinDir());
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const CSV = csvName(version);
const CHECK_LINE = /^kubectl -n operators get csv.*$/m;
const DOWN_LINE = /^npm run cluster -- down.*$/m;

interface PodView {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

describe(
  'README: "With OLM on the local cluster" as typed',
  { skip: unavailable ?? false, timeout: 900_000 },
  () => {
    it('installs the operator through OLM onto the real node, converts, a sample AITask gets MetricsAvailable=True, and cluster down leaves the machine as found', async () => {
      const block = readmeShBlock('## With OLM on the local cluster');
      const check = CHECK_LINE.exec(block);
      const downLine = DOWN_LINE.exec(block);
      assert.ok(
        check && downLine && block.includes('npm run cluster -- up --real-node --olm --prometheus'),
        'the README block is found',
      );
      const setup = block.slice(0, check.index);
      const rest = block.slice(check.index + check[0].length, downLine.index);
      const teardown = block.slice(downLine.index);
      const sample = waitedTask(rest);
      const before = await machineBeforeNode();
      const dir = mkdtempSync(join(tmpdir(), 'aiops-readme-olm-'));
      const clusterDir = join(dir, 'cluster');
      const env: NodeJS.ProcessEnv = { ...process.env, AIOPS_CLUSTER_DIR: clusterDir };
      delete env['KUBECONFIG'];
      /** Runs `script` as typed, in bash with errexit; stdout, or a failure with both outputs. */
      const bash = (script: string, timeout: number): string => {
        try {
          return execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
            cwd: root,
            env,
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout,
          });
        } catch (err) {
          const e = err as { stderr?: string; stdout?: string };
          throw new Error(`the README block failed:\n${script}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
            cause: err,
          });
        }
      };
      let down = false;
      try {
        bash(setup, 600_000);
        const kubectl = kubectlWith(join(clusterDir, 'kubeconfig'));
        const olm = olmViews(kubectl, OPERATORS_NAMESPACE);
        // The block's own check line, as typed, until it shows the promised outcome.
        const typedCheck = `eval "$(npm run -s cluster -- env)"\n${check[0]}`;
        await eventually(
          `"${check[0]}" to show ${CSV} Succeeded`,
          () =>
            new RegExp(`^${CSV.replaceAll('.', '\\.')}\\s.*\\sSucceeded\\s*$`, 'm').test(
              bash(typedCheck, 60_000),
            )
              ? true
              : undefined,
          120_000,
        ).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}\nOLM's state: ${olm.csvPhase(CSV) ?? 'no CSV'}`, {
            cause: err,
          });
        });
        await olm.stableSucceeded(CSV, 120_000);

        const pods = (
          JSON.parse(
            kubectl([
              'get',
              'pods',
              '-n',
              OPERATORS_NAMESPACE,
              '-l',
              'app.kubernetes.io/name=aiops-operator',
              '-o',
              'json',
            ]),
          ) as { items: PodView[] }
        ).items;
        assert.ok(pods.length > 0, 'the operator has Pods');
        for (const p of pods) {
          assert.equal(p.spec.nodeName, REAL_NODE_NAME, `${p.metadata.name} runs on the real node`);
          assert.equal(p.status.phase, 'Running', p.metadata.name);
          assert.equal(p.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True', p.metadata.name);
        }

        const nodes = kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']).split(' ');
        assert.deepEqual(nodes, [REAL_NODE_NAME], 'a --real-node cluster has only the real node');
        assert.equal(
          kubectl(['get', 'crd', 'aitasks.aiops.example.com', '-o', 'jsonpath={.spec.conversion.strategy}']),
          'Webhook',
          'OLM configured the conversion webhook',
        );
        kubectl(['create', 'namespace', 'readme']);
        const task = {
          apiVersion: 'aiops.example.com/v1alpha1',
          kind: 'AITask',
          metadata: { name: 'legacy', namespace: 'readme' },
          spec: { target: 'web', threshold: 75, action: 'Noop', interval: '45s' },
        };
        await eventually(
          'a v1alpha1 create through the operator on the real node',
          () => kubectl(['apply', '-f', '-'], JSON.stringify(task)),
          120_000,
        );
        const v1 = JSON.parse(
          kubectl(['get', 'aitasks.v1.aiops.example.com', 'legacy', '-n', 'readme', '-o', 'json']),
        ) as { spec: { threshold: number; intervalSeconds: number } };
        assert.deepEqual([v1.spec.threshold, v1.spec.intervalSeconds], [0.75, 45]);
        const v2 = JSON.parse(
          kubectl(['get', 'aitasks.v2.aiops.example.com', 'legacy', '-n', 'readme', '-o', 'json']),
        ) as { spec: { target: { name: string }; trigger: { threshold: number } } };
        assert.deepEqual([v2.spec.target.name, v2.spec.trigger.threshold], ['web', 0.75]);

        // The rest as typed: the environment again (a new shell), then the sample and its wait.
        try {
          bash(`eval "$(npm run -s cluster -- env)"\n${rest}`, 240_000);
        } catch (err) {
          throw new Error(`${(err as Error).message}\n${diagnostics(kubectl, sample, OPERATORS_NAMESPACE)}`, {
            cause: err,
          });
        }
        assertMetricsAvailable(kubectl, sample);
        bash(teardown, 180_000);
        down = true;
      } finally {
        if (!down)
          execFileSync('npm', ['run', '-s', 'cluster', '--', 'down'], { cwd: root, env, stdio: 'ignore' });
        rmSync(dir, { recursive: true, force: true });
      }
      assert.deepEqual(machineSnapshot(), before);
    });
  },
);
