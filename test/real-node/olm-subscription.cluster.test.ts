// Install through a real OLM, as the README tells users: CatalogSource aiops-catalog (served
// by the harness with `opm serve` from bundle/catalog-inline), a Subscription to channel
// `stable` → InstallPlan → CSV Succeeded and stable → the operator Pods Running on the real
// node from the locally built image with the certificate OLM issued → the CRD's conversion
// configured by OLM and reached through OLM's Service, and an AITask heals a real Deployment
// (ScaleUp, then RestartPod through the Eviction API) with Prometheus and the startup storage
// migration set through the Subscription's config.env, under exactly the permissions OLM
// granted. Then uninstall (Subscription and CSV deleted: the operator stops, AITasks and the
// CRD stay). CordonNode is not run here: the real node is the only node, and the cordon cap
// refuses to cordon every node; its rule (patch nodes) is in the permission comparison.
import { eventually } from '../harness/wait.ts';
import { kubectlWith, type Kubectl } from '../harness/kubectl.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildOperatorImage } from '../../scripts/image.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';
import { csvName } from '../../api/releases.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { olmUnavailable, OPERATORS_NAMESPACE } from '../harness/olm.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { DEMO_WEB_IMAGE, ensureDemoWebImage } from '../harness/real-node/images.ts';
import { NODE_NET, REAL_NODE_NAME, REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { olmViews } from './olm-support.ts';
import {
  csvInstall,
  csvServiceAccount,
  flatten,
  olmAdditions,
  type Binding,
  type Rule,
} from './olm-permissions.ts';
import { isOperatorProcess, podProcesses, readmeShBlock, webDeployment } from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir()) ?? olmUnavailable(defaultBinDir());
const NS = OPERATORS_NAMESPACE;
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const CSV = csvName(version);

/** The README's Subscription for the local cluster: the heredoc of its block. */
function readmeSubscription(): string {
  const heading = '## With OLM on the local cluster';
  const manifest = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(readmeShBlock(heading))?.[1];
  if (manifest === undefined) throw new Error(`the README has no Subscription heredoc under "${heading}"`);
  return manifest;
}

interface PodView {
  metadata: { name: string; uid: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

describe(
  'OLM: install and uninstall through a Subscription',
  { skip: unavailable ?? false, concurrency: false, timeout: 900_000 },
  () => {
    let cluster: Cluster;
    let exporter: Exporter;
    let prometheus: Prometheus;
    let kubectl: Kubectl;
    const stoppers: (() => Promise<void>)[] = [];

    const operatorPods = (): PodView[] =>
      (
        JSON.parse(
          kubectl(['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=aiops-operator', '-o', 'json']),
        ) as { items: PodView[] }
      ).items;
    const webPods = (): PodView[] =>
      (
        JSON.parse(kubectl(['get', 'pods', '-n', 'heal', '-l', 'app=web', '-o', 'json'])) as {
          items: PodView[];
        }
      ).items;
    const healTask = (action: 'ScaleUp' | 'RestartPod'): object => ({
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: 'web-heal', namespace: 'heal' },
      spec: {
        target: { kind: 'Deployment', name: 'web' },
        trigger: { query: 'shop_load{namespace="heal",deployment="web"}', threshold: 0.8 },
        remediation: { action, scale: { step: 1, minReplicas: 2, maxReplicas: 3 }, cooldownSeconds: 0 },
        intervalSeconds: 10,
      },
    });
    const readyOnNode = (p: PodView): boolean =>
      p.spec.nodeName === REAL_NODE_NAME &&
      p.status.phase === 'Running' &&
      (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    let olm: ReturnType<typeof olmViews>;
    const stableSucceeded = (): Promise<void> => olm.stableSucceeded(CSV, 300_000);

    before(async () => {
      const image = buildOperatorImage({ log: () => undefined });
      ensureDemoWebImage();
      cluster = await startCluster({ realNode: true, olm: true, nodes: 0, images: [image, DEMO_WEB_IMAGE] });
      stoppers.push(() => cluster.stop());
      exporter = await startExporter();
      stoppers.push(() => exporter.close());
      prometheus = await startPrometheus([exporter.address], 30_000, NODE_NET.hostIP);
      stoppers.push(() => prometheus.stop());
      kubectl = kubectlWith(cluster.kubeconfigPath);
      olm = olmViews(kubectl, NS);
    });
    after(async () => {
      for (const stop of stoppers.reverse()) await stop();
    });

    it('the README Subscription installs the operator: CSV Succeeded, Pods Running on the real node from the image', async () => {
      kubectl(['apply', '-f', '-'], readmeSubscription());
      await eventually(
        'an InstallPlan approved and complete',
        () => {
          const phase = kubectl(['get', 'installplan', '-n', NS, '-o', 'jsonpath={.items[0].status.phase}']);
          return phase === 'Complete' ? true : undefined;
        },
        300_000,
      );
      await stableSucceeded();
      const pods = await eventually(
        'two operator Pods Ready on the real node',
        () => {
          const ps = operatorPods();
          return ps.length === 2 && ps.every(readyOnNode) ? ps : undefined;
        },
        120_000,
      );
      for (const p of pods) assert.ok(podProcesses(p.metadata.uid).some((x) => isOperatorProcess(x.cmdline)));
    });

    it('reports itself in the OperatorCondition OLM made: Available, not Progressing or Degraded, Upgradeable', async () => {
      await olm.operatorConditions(CSV, [
        'Available=True:Reconciling',
        'Degraded=False:WatchesHealthy',
        'Progressing=False:Started',
        'Upgradeable=True:StorageCurrent',
      ]);
      const shown = execFileSync(
        'bash',
        ['-euo', 'pipefail', '-c', readmeShBlock('## What the operator reports to OLM')],
        {
          encoding: 'utf8',
          env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
        },
      );
      assert.match(shown, /^Available=True Reconciling: the leader reconciles AITasks$/m, shown);
      assert.match(shown, /^Upgradeable=True StorageCurrent: every AITask is stored at v2$/m, shown);
    });

    it("grants the operator exactly the CSV's permissions plus the additions OLM makes in AllNamespaces mode", () => {
      const sa = csvServiceAccount();
      const effective = new Set<string>();
      for (const kind of ['clusterrolebindings', 'rolebindings']) {
        const list = JSON.parse(kubectl(['get', kind, '-A', '-o', 'json'])) as { items: Binding[] };
        for (const b of list.items.filter((x) =>
          // A RoleBinding's ServiceAccount subject without a namespace means the binding's own.
          (x.subjects ?? []).some(
            (s) =>
              s.kind === 'ServiceAccount' && s.name === sa && (s.namespace ?? x.metadata.namespace) === NS,
          ),
        )) {
          const ns = b.roleRef.kind === 'Role' ? (b.metadata.namespace ?? '') : '';
          const role = JSON.parse(
            kubectl([
              'get',
              b.roleRef.kind === 'Role' ? 'role' : 'clusterrole',
              b.roleRef.name,
              ...(ns ? ['-n', ns] : []),
              '-o',
              'json',
            ]),
          ) as { rules: Rule[] };
          for (const t of flatten(ns === '' ? 'cluster' : `ns:${ns}`, role.rules)) effective.add(t);
        }
      }
      const csv = csvInstall();
      const expected = new Set<string>([
        ...csv.clusterPermissions.flatMap((p) => flatten('cluster', p.rules)),
        // The CSV's namespaced permissions: a Role in the install namespace and, because the
        // OperatorGroup selects all namespaces, the same rules cluster-wide.
        ...csv.permissions.flatMap((p) => [...flatten(`ns:${NS}`, p.rules), ...flatten('cluster', p.rules)]),
        ...olmAdditions(NS, CSV).flatMap((a) => flatten(a.scope, [a.rule])),
      ]);
      assert.deepEqual([...effective].sort(), [...expected].sort());
    });

    it('serves conversion through the Service and certificate OLM made (created at v1alpha1, read at v1 and v2)', async () => {
      const conversion = JSON.parse(
        kubectl(['get', 'crd', 'aitasks.aiops.example.com', '-o', 'jsonpath={.spec.conversion}']),
      ) as {
        strategy: string;
        webhook: {
          clientConfig: { service: { name: string; namespace: string; path: string }; caBundle: string };
        };
      };
      assert.equal(conversion.strategy, 'Webhook');
      assert.deepEqual(
        { ...conversion.webhook.clientConfig.service, port: undefined },
        { name: 'aiops-operator-service', namespace: NS, path: '/convert', port: undefined },
      );
      const secret = JSON.parse(
        kubectl(['get', 'secret', 'aiops-operator-service-cert', '-n', NS, '-o', 'json']),
      ) as { data: Record<string, string> };
      assert.ok(secret.data['tls.crt'] && secret.data['olmCAKey'], 'OLM issued the serving certificate');
      kubectl(['create', 'namespace', 'shop']);
      const task = {
        apiVersion: 'aiops.example.com/v1alpha1',
        kind: 'AITask',
        metadata: { name: 'legacy', namespace: 'shop' },
        spec: { target: 'web', threshold: 75, action: 'Noop', interval: '45s' },
      };
      await eventually(
        "a v1alpha1 create through OLM's Service",
        () => kubectl(['apply', '-f', '-'], JSON.stringify(task)),
        120_000,
      );
      const v1 = JSON.parse(
        kubectl(['get', 'aitasks.v1.aiops.example.com', 'legacy', '-n', 'shop', '-o', 'json']),
      ) as { spec: { threshold: number; intervalSeconds: number } };
      assert.deepEqual([v1.spec.threshold, v1.spec.intervalSeconds], [0.75, 45]);
      const v2 = JSON.parse(
        kubectl(['get', 'aitasks.v2.aiops.example.com', 'legacy', '-n', 'shop', '-o', 'json']),
      ) as { spec: { trigger: { threshold: number } }; status?: { phase?: string } };
      assert.equal(v2.spec.trigger.threshold, 0.75);
      await eventually(
        'the operator OLM runs to reconcile it',
        () =>
          (
            JSON.parse(
              kubectl(['get', 'aitasks.v2.aiops.example.com', 'legacy', '-n', 'shop', '-o', 'json']),
            ) as { status?: { phase?: string } }
          ).status?.phase,
        120_000,
      );
    });

    it("heals a real Deployment (scale, then evict) with settings from the Subscription's config.env, storage migrated at start", async () => {
      const config = {
        tolerations: [REAL_NODE_TOLERATION],
        env: [
          { name: 'AIOPS_PROMETHEUS_URL', value: prometheus.url },
          { name: 'AIOPS_MIGRATE_STORAGE_ON_START', value: 'true' },
        ],
      };
      kubectl([
        'patch',
        'subscription',
        'aiops-operator',
        '-n',
        NS,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { config } }),
      ]);
      await eventually(
        'OLM to roll the operator out with the setting',
        () => {
          const env = kubectl([
            'get',
            'deploy',
            'aiops-operator',
            '-n',
            NS,
            '-o',
            'jsonpath={.spec.template.spec.containers[0].env}',
          ]);
          const ps = operatorPods();
          return env.includes(prometheus.url) && ps.length === 2 && ps.every(readyOnNode) ? true : undefined;
        },
        300_000,
      );
      kubectl(['create', 'namespace', 'heal']);
      kubectl(['apply', '-n', 'heal', '-f', '-'], JSON.stringify(webDeployment(2)));
      exporter.set('shop_load', { namespace: 'heal', deployment: 'web' }, 0.95);
      kubectl(['apply', '-f', '-'], JSON.stringify(healTask('ScaleUp')));
      await eventually(
        'three real web Pods after the ScaleUp',
        () => (webPods().filter(readyOnNode).length === 3 ? true : undefined),
        180_000,
      );
      exporter.set('shop_load', { namespace: 'heal', deployment: 'web' }, 0.2);

      const uids = new Set(
        webPods()
          .filter(readyOnNode)
          .map((p) => p.metadata.uid),
      );
      kubectl(['apply', '-f', '-'], JSON.stringify(healTask('RestartPod')));
      exporter.set('shop_load', { namespace: 'heal', deployment: 'web' }, 0.95);
      await eventually(
        'one web Pod evicted and replaced',
        () => {
          const now = webPods().filter(readyOnNode);
          return now.length === 3 && now.filter((p) => uids.has(p.metadata.uid)).length === 2
            ? true
            : undefined;
        },
        180_000,
      );
      exporter.set('shop_load', { namespace: 'heal', deployment: 'web' }, 0.2);
      const logs = operatorPods()
        .map((p) => kubectl(['logs', '-n', NS, p.metadata.name]))
        .join('\n');
      assert.match(
        logs,
        /"msg":"storage migration done"/,
        'the startup migration ran under the granted permissions',
      );
      assert.doesNotMatch(logs, /forbidden/i);
    });

    it('uninstall: deleting the Subscription and CSV stops the operator; the AITasks and the CRD stay', async () => {
      kubectl(['delete', 'subscription', 'aiops-operator', '-n', NS]);
      kubectl(['delete', 'csv', CSV, '-n', NS]);
      await eventually(
        'the operator Pods gone',
        () => (operatorPods().length === 0 ? true : undefined),
        120_000,
      );
      assert.match(kubectl(['get', 'crd', 'aitasks.aiops.example.com', '-o', 'name']), /aitasks/);
      assert.match(
        kubectl(['get', 'aitasks.v2.aiops.example.com', 'legacy', '-n', 'shop', '-o', 'name']),
        /legacy/,
      );
      // OLM takes the gone operator's webhook out of the CRD, so the AITasks stay readable.
      await eventually(
        'OLM to set the CRD conversion to None',
        () =>
          kubectl([
            'get',
            'crd',
            'aitasks.aiops.example.com',
            '-o',
            'jsonpath={.spec.conversion.strategy}',
          ]) === 'None'
            ? true
            : undefined,
        120_000,
      );
    });
  },
);
