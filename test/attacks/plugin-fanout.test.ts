// Integration test of `kubectl aiops force-finalize` against a status written to make it fan
// out: status.cordonedNodes, which anyone who may write aitasks/status
// fills, lists thousands of made-up node names beside the one node the AITask's mark is on.
// Run through the real kubectl as an engineer runs it, the dry run reads the nodes with one
// LIST (the apiserver answers no GET for a made-up name), still names the marked node to
// uncordon, and prints a screenful: the first skipped names and a count of the rest.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { CORDONED_BY_ANNOTATION } from '../../api/cordon.ts';
import { FINALIZER } from '../../api/install.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { CORDONED_NODES_MAX_ITEMS } from '../../api/schema/common.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import { MAX_SKIPS_SHOWN } from '../../plugin/finalize-plan.ts';
import { Resources, type NodeLike } from '../../plugin/kinds.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../support/kubectl-run.ts';

let PATH = '';
let KC = '';
const run = (args: readonly string[]): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC });

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

/** Made-up names: the 7,000, or as many as the CRD lets a status list. */
const NAMES = Math.min(7000, CORDONED_NODES_MAX_ITEMS);
/** Node GETs one run may cost on a shared cluster (other tests read nodes too): far below NAMES. */
const MAX_NODE_GETS = 50;

test('force-finalize on a status of thousands of made-up cordonedNodes: one node LIST, bounded output, the marked node still owed', async (t) => {
  const ns = await freshNamespace('plugin-fan', (fn) => t.after(fn));
  const node = `${ns}-node`;
  const tasks = await testAITasks('v2');
  const created = await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'wide', finalizers: [FINALIZER] },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'CordonNode' },
    },
  });
  const admin = await testTransport();
  const nodes = new ResourceClient<NodeLike>(admin, Resources.nodes);
  await nodes.create(undefined, {
    metadata: { name: node, annotations: { [CORDONED_BY_ANNOTATION]: created.metadata.uid ?? '' } },
    spec: { unschedulable: true },
  });
  t.after(async () => {
    await nodes.delete(undefined, node).catch(() => undefined);
  });
  const madeUp = Array.from({ length: NAMES }, (_, i) => `${ns}-x${i}`);
  await tasks.patchStatus(ns, 'wide', { cordonedNodes: madeUp });
  await tasks.delete(ns, 'wide');
  t.after(async () => {
    await tasks.patch(ns, 'wide', { metadata: { finalizers: [] } }).catch(() => undefined);
  });

  const notFound = () => apiserverRequests(admin, { resource: 'nodes', verb: 'GET', code: '404' });
  const gets = () => apiserverRequests(admin, { resource: 'nodes', verb: 'GET' });
  const [notFoundBefore, getsBefore] = [await notFound(), await gets()];
  const dry = await run([
    'force-finalize',
    'wide',
    '-n',
    ns,
    '--lease-namespace',
    ns,
    '--request-timeout',
    '20s',
  ]);
  const [notFoundAfter, getsAfter] = [await notFound(), await gets()];

  t.diagnostic(
    `${getsAfter - getsBefore} node GETs (${notFoundAfter - notFoundBefore} answered 404), ${dry.stdout.split('\n').length} lines`,
  );
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /Dry run: nothing changed/);
  assert.match(
    dry.stdout,
    new RegExp(`${node} +uncordon +cordoned by this AITask`),
    'not listed in status, but marked',
  );
  assert.match(
    dry.stdout,
    new RegExp(`… and ${NAMES - MAX_SKIPS_SHOWN} more listed in status.cordonedNodes, all skipped`),
  );
  const lines = dry.stdout.split('\n').length;
  assert.ok(lines <= MAX_SKIPS_SHOWN + 20, `${lines} lines printed for ${NAMES} names in status`);
  assert.ok(
    getsAfter - getsBefore <= MAX_NODE_GETS && notFoundAfter - notFoundBefore <= MAX_NODE_GETS,
    `${getsAfter - getsBefore} node GETs (${notFoundAfter - notFoundBefore} answered 404) for one dry run over ${NAMES} names`,
  );

  const json = JSON.parse(
    (await run(['force-finalize', 'wide', '-n', ns, '--lease-namespace', ns, '-o', 'json'])).stdout,
  ) as { plan: { cleanup: unknown[]; cleanupOmitted: number } };
  assert.equal(json.plan.cleanup.length, 1 + MAX_SKIPS_SHOWN);
  assert.equal(json.plan.cleanupOmitted, NAMES - MAX_SKIPS_SHOWN);
});
