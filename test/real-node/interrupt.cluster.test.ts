// `npm test` interrupted while a test file holds a cluster with the machine's real node: once
// SIGTERM has ended the run (143), no process of it is left, the node's network namespace is
// gone and the sysctls the kubelet changed are as they were (harness/interrupted-run.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { interruptedRun } from '../harness/interrupted-run.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { readSysctls } from '../harness/real-node/host-state.ts';
import { NODE_NET } from '../harness/real-node/layout.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';

test(
  'npm test, sent SIGTERM while a test file holds the real node, leaves no process, namespace or sysctl of it',
  { skip: realNodeUnavailable(defaultBinDir()) ?? false, timeout: 600_000 },
  async () => {
    const before = readSysctls();
    const run = await interruptedRun({ realNode: true, readyMs: 300_000 });
    assert.ok(
      run.runningBefore >= 8,
      `the environment's, the cluster's and the node's processes ran: ${run.runningBefore}`,
    );
    assert.equal(run.code, 143, run.stderr);
    assert.deepEqual(run.left, [], 'no process of the run is left');
    assert.equal(run.testFileAlive, false, "the test file's process is gone");
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    assert.ok(!namespaces.includes(NODE_NET.netns), `the node's namespace is gone: ${namespaces}`);
    assert.deepEqual(readSysctls(), before, 'the sysctls the kubelet may change are as they were');
  },
);
