// The README's local install blocks (docs/install.md), "Try the image and the plain install
// locally" and "Try the chart locally", each run as a user types it (its own persistent cluster
// dir; for the chart, the harness's helm on PATH as a user's would be): every command up to
// `npm run cluster -- down` must succeed, its `kubectl wait` included, so the sample AITask reads
// its metric through the Prometheus of `cluster -- up --prometheus` (also asserted on the task's
// status, which the failure message shows); then that line as typed, and the machine must be
// left as it was found. In test/real-node/ so it runs one at a time with the other real-node suites.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { helmPath, skipUnlessHelm } from '../helm/helm.ts';
import { kubectlWith } from '../harness/kubectl.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { assertMetricsAvailable, diagnostics, waitedTask } from './readme-task.ts';
import { machineBeforeNode, machineSnapshot, readmeShBlock } from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir());
const DOWN_LINE = /^npm run cluster -- down.*$/m;

/** The documented local installs: the heading of each block, and whether it runs helm. */
const BLOCKS = [
  { heading: '## Try the image and the plain install locally', helm: false },
  { heading: '## Try the chart locally', helm: true },
] as const;

for (const { heading, helm } of BLOCKS)
  describe(
    `README: "${heading.slice(3)}" as typed`,
    { skip: unavailable ?? (helm ? skipUnlessHelm('AIOPS_REQUIRE_REAL_NODE') : false), timeout: 600_000 },
    () => {
      it('installs, a sample AITask gets MetricsAvailable=True, and cluster down leaves the machine as found', async () => {
        const block = readmeShBlock(heading);
        const down = DOWN_LINE.exec(block);
        assert.ok(
          down && block.includes('npm run cluster -- up --real-node --prometheus'),
          'the README block is found',
        );
        const task = waitedTask(block);
        const before = await machineBeforeNode();
        const dir = mkdtempSync(join(tmpdir(), 'aiops-readme-'));
        const env: NodeJS.ProcessEnv = { ...process.env, AIOPS_CLUSTER_DIR: join(dir, 'cluster') };
        delete env['KUBECONFIG'];
        if (helm) {
          // helm on PATH, as a user has it: only helm, not the rest of the harness's binaries.
          mkdirSync(join(dir, 'bin'));
          symlinkSync(helmPath(), join(dir, 'bin', 'helm'));
          env['PATH'] = `${join(dir, 'bin')}:${env['PATH'] ?? ''}`;
        }
        const bash = (script: string, timeout: number): void => {
          execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
            cwd: root,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout,
          });
        };
        const kubectl = kubectlWith(join(dir, 'cluster', 'kubeconfig'));
        let wentDown = false;
        try {
          try {
            bash(block.slice(0, down.index), 480_000);
          } catch (err) {
            const e = err as { stderr?: Buffer; stdout?: Buffer };
            assert.fail(
              `the README block failed:\n${e.stdout?.toString() ?? ''}\n${e.stderr?.toString() ?? ''}\n` +
                diagnostics(kubectl, task, 'aiops-system'),
            );
          }
          assertMetricsAvailable(kubectl, task);
          bash(block.slice(down.index), 180_000);
          wentDown = true;
        } finally {
          if (!wentDown)
            execFileSync('npm', ['run', '-s', 'cluster', '--', 'down'], { cwd: root, env, stdio: 'ignore' });
          rmSync(dir, { recursive: true, force: true });
        }
        assert.deepEqual(machineSnapshot(), before);
      });
    },
  );
