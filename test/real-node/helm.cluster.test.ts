// The Helm chart on a real node, with the real helm: `helm install` without prometheus.url is
// refused with the message the chart promises; the previous release's chart installs and its
// operator Pods become Ready; AITasks are written at every version; docs/install.md's
// "Upgrading with Helm" block, run as typed, applies the new CRD and upgrades to the current
// chart keeping every AITask field for field; the upgraded operator heals a real Deployment
// on a real Prometheus metric; and `helm uninstall` leaves nothing of the chart but the CRD
// and the AITasks (plus what the operator wrote itself: its Secret with the conversion stash
// key and its Lease).
//
// No published 0.2.0 image exists here: the current build tagged v0.2.0 stands in for it, as
// in the OLM upgrade test; what differs between the two charts is their version, image tag
// and CRD (0.2.0 stores v1), so the upgrade moves Helm's release, the image and the CRD.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { LEADER_LEASE_NAME } from '../../lib/lease-liveness.ts';
import { operatorImage, RELEASES } from '../../api/releases.ts';
import { CRD_RELEASES, crdOfRelease } from '../../api/upgrade/crd-releases.ts';
import { toYaml } from '../../lib/yaml.ts';
import { buildOperatorImage } from '../../scripts/image.ts';
import { tagImage } from '../../scripts/lib/images.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';
import { CHART_DIR, chartFiles, writeChart } from '../../scripts/olm/helm.ts';
import { PROMETHEUS_URL_REQUIRED } from '../../scripts/olm/helm-values.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { kubectlWith, type Kubectl } from '../harness/kubectl.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { DEMO_WEB_IMAGE, ensureDemoWebImage } from '../harness/real-node/images.ts';
import { NODE_NET, REAL_NODE_NAME, REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { eventually } from '../harness/wait.ts';
import { helm, helmPath, skipUnlessHelm, type HelmRun } from '../helm/helm.ts';
import { machineBeforeNode, machineSnapshot, readmeShBlock, webDeployment } from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable =
  realNodeUnavailable(defaultBinDir()) ?? (skipUnlessHelm('AIOPS_REQUIRE_REAL_NODE') || undefined);
const NS = DEFAULT_INSTALL.namespace;
const APP_NS = 'shop';
const G = 'aiops.example.com';
const GAUGE = 'shop_load';
const VERSIONS = ['v1alpha1', 'v1', 'v2'] as const;
const [previous, current] = RELEASES.slice(-2);

interface Task {
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

describe(
  'Helm: install, upgrade from the previous chart, heal, uninstall on a real node',
  {
    skip: unavailable ?? (previous === undefined ? 'one release only' : false),
    concurrency: false,
    timeout: 1_200_000,
  },
  () => {
    assert.ok(previous && current);
    let cluster: Cluster;
    let kubectl: Kubectl;
    let prometheus: Prometheus;
    let exporter: Exporter;
    let before0: Record<string, unknown>;
    const stoppers: (() => Promise<void>)[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'aiops-helm-'));
    const previousChart = join(dir, 'previous', 'aiops-operator');
    const valuesFile = join(dir, 'real-node-values.yaml');
    const written = new Map<string, Task>();
    /** helm against the suite's cluster, its config and cache in the suite's dir. */
    const env = (): NodeJS.ProcessEnv => ({
      KUBECONFIG: cluster.kubeconfigPath,
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    });
    const helmOk = (args: readonly string[]): HelmRun => {
      const r = helm(args, env());
      assert.equal(r.code, 0, `helm ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
      return r;
    };
    const get = (v: string, name: string): Task =>
      JSON.parse(kubectl(['get', `aitasks.${v}.${G}`, name, '-n', APP_NS, '-o', 'json'])) as Task;
    const jsonpath = (args: readonly string[], path: string): string =>
      kubectl([...args, '-o', `jsonpath=${path}`]);
    const deployedImage = (): string =>
      jsonpath(['-n', NS, 'get', 'deploy', 'aiops-operator'], '{.spec.template.spec.containers[0].image}');
    /** Waits until `n` Ready operator pods run `image` on the real node and no other exists. */
    const operatorReady = (image: string, n = 2): Promise<true> =>
      eventually(
        `${n} Ready operator pods running ${image}`,
        () => {
          const pods = (
            JSON.parse(
              kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/name=aiops-operator', '-o', 'json']),
            ) as {
              items: {
                spec: { nodeName?: string; containers: { image: string }[] };
                status: { conditions?: { type: string; status: string }[] };
                metadata: { deletionTimestamp?: string };
              }[];
            }
          ).items;
          const ready = pods.filter(
            (p) =>
              p.metadata.deletionTimestamp === undefined &&
              p.spec.nodeName === REAL_NODE_NAME &&
              p.spec.containers[0]?.image === image &&
              (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          return ready.length === n && pods.length === n ? true : undefined;
        },
        240_000,
      );

    before(async () => {
      before0 = await machineBeforeNode();
      const image = buildOperatorImage({ log: () => undefined });
      tagImage(image, operatorImage(previous.version));
      ensureDemoWebImage();
      cluster = await startCluster({
        realNode: true,
        nodes: 0,
        images: [image, operatorImage(previous.version), DEMO_WEB_IMAGE],
      });
      stoppers.push(() => cluster.stop());
      kubectl = kubectlWith(cluster.kubeconfigPath);
      exporter = await startExporter();
      stoppers.push(() => exporter.close());
      prometheus = await startPrometheus([exporter.address], 30_000, NODE_NET.hostIP);
      stoppers.push(() => prometheus.stop());
      // The previous release's chart: the same templates at its version, with its CRD.
      const crd = CRD_RELEASES.find((r) => r.version === previous.version);
      assert.ok(crd, `api/upgrade/crd-releases.ts has ${previous.version}`);
      writeChart(
        previousChart,
        chartFiles(
          previous.version,
          crdOfRelease(crd, { service: { namespace: NS, name: DEFAULT_INSTALL.webhookService, port: 443 } }),
        ),
      );
      // What this cluster needs of every install: the real node's taint tolerated, and where Prometheus is.
      writeFileSync(
        valuesFile,
        toYaml({ prometheus: { url: prometheus.url }, tolerations: [REAL_NODE_TOLERATION] }),
      );
    });
    after(async () => {
      for (const stop of stoppers.splice(0).reverse()) await stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses helm install without prometheus.url, saying what to set', () => {
      const r = helm(
        ['install', 'aiops', join(root, CHART_DIR), '--namespace', NS, '--create-namespace'],
        env(),
      );
      assert.notEqual(r.code, 0);
      assert.ok(r.stderr.includes(PROMETHEUS_URL_REQUIRED), r.stderr);
      assert.equal(helmOk(['list', '--namespace', NS, '--short']).stdout.trim(), '', 'no release');
      assert.equal(
        kubectl(['-n', NS, 'get', 'deploy,svc,sa,role,pdb', '-o', 'name']).includes('aiops'),
        false,
      );
      // Helm puts crds/ in before it renders the templates: the refused install left the current CRD. The
      // previous chart must bring its own, so it goes (no AITask exists yet).
      kubectl(['delete', 'crd', `aitasks.${G}`, '--ignore-not-found', '--wait=true']);
    });

    it(`installs the ${previous.version} chart: its operator Pods are Ready on the real node, its CRD stores v1`, async () => {
      helmOk([
        'install',
        'aiops',
        previousChart,
        '--namespace',
        NS,
        '--create-namespace',
        '-f',
        valuesFile,
        '--wait',
        '--timeout',
        '5m',
      ]);
      await operatorReady(operatorImage(previous.version));
      assert.equal(deployedImage(), operatorImage(previous.version));
      assert.deepEqual(JSON.parse(jsonpath(['get', 'crd', `aitasks.${G}`], '{.status.storedVersions}')), [
        'v1',
      ]);
      const ca = await eventually(
        'the CRD caBundle from the operator',
        () =>
          jsonpath(['get', 'crd', `aitasks.${G}`], '{.spec.conversion.webhook.clientConfig.caBundle}') ||
          undefined,
        120_000,
      );
      const secret = JSON.parse(
        kubectl(['-n', NS, 'get', 'secret', DEFAULT_INSTALL.webhookCertSecret, '-o', 'json']),
      ) as {
        data: Record<string, string>;
      };
      assert.equal(secret.data['ca.crt'], ca, 'the CRD trusts the CA the operator issued');
    });

    it('AITasks written at every served version are read back at every version', async () => {
      kubectl(['create', 'namespace', APP_NS]);
      kubectl(['apply', '-n', APP_NS, '-f', '-'], JSON.stringify(webDeployment(2)));
      const tasks = [
        {
          apiVersion: `${G}/v1alpha1`,
          kind: 'AITask',
          metadata: { name: 'legacy', namespace: APP_NS, labels: { team: 'a' } },
          spec: { target: 'batch', threshold: 75, action: 'Noop', interval: '45s' },
        },
        {
          apiVersion: `${G}/v1`,
          kind: 'AITask',
          metadata: { name: 'stable', namespace: APP_NS },
          spec: { targetDeployment: 'api', threshold: 0.5, action: 'scale_up', intervalSeconds: 30 },
        },
        {
          apiVersion: `${G}/v2`,
          kind: 'AITask',
          metadata: { name: 'rich', namespace: APP_NS },
          spec: {
            target: { kind: 'Deployment', name: 'cache' },
            trigger: { query: 'up{job="cache"}', threshold: 0.25, operator: 'LessThan', forSeconds: 20 },
            remediation: {
              action: 'ScaleUp',
              scale: { step: 2, minReplicas: 1, maxReplicas: 5 },
              maxAttempts: 2,
            },
            intervalSeconds: 60,
            dryRun: true,
            approval: 'Manual',
          },
        },
      ];
      for (const t of tasks)
        await eventually(
          `create ${t.metadata.name} at ${t.apiVersion}`,
          () => kubectl(['apply', '-f', '-'], JSON.stringify(t)),
          120_000,
        );
      for (const t of tasks)
        for (const v of VERSIONS) written.set(`${t.metadata.name}@${v}`, get(v, t.metadata.name));
      assert.equal(written.size, 9);
    });

    it(`docs/install.md "Upgrading with Helm", run as typed, upgrades to ${current.version} keeping every AITask`, async () => {
      const block = readmeShBlock('### Upgrading with Helm');
      assert.match(block, /helm upgrade/);
      execFileSync('bash', ['-euo', 'pipefail', '-c', block], {
        cwd: root,
        env: { ...process.env, ...env(), PATH: `${dirname(helmPath())}:${process.env['PATH'] ?? ''}` },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 400_000,
      });
      await operatorReady(operatorImage(current.version));
      assert.match(
        helmOk(['list', '--namespace', NS]).stdout,
        new RegExp(`aiops-operator-${current.version}`),
      );
      assert.equal(
        jsonpath(['get', 'crd', `aitasks.${G}`], '{.spec.versions[?(@.storage==true)].name}'),
        'v2',
        'the new CRD stores v2',
      );
      for (const [k, want] of written) {
        const [name = '', v = ''] = k.split('@');
        const got = await eventually(`${k} readable`, () => get(v, name), 60_000);
        assert.deepEqual(
          { spec: got.spec, labels: got.metadata.labels },
          { spec: want.spec, labels: want.metadata.labels },
          k,
        );
      }
    });

    it('heals on a real Prometheus metric after the upgrade: ScaleUp adds a real pod', async () => {
      exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
      kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: `${G}/v2`,
          kind: 'AITask',
          metadata: { name: 'web-heal', namespace: APP_NS },
          spec: {
            target: { kind: 'Deployment', name: 'web' },
            trigger: { query: `${GAUGE}{namespace="${APP_NS}",deployment="web"}`, threshold: 0.8 },
            remediation: {
              action: 'ScaleUp',
              scale: { step: 1, minReplicas: 2, maxReplicas: 3 },
              cooldownSeconds: 0,
            },
            intervalSeconds: 10,
          },
        }),
      );
      await eventually(
        'MetricsAvailable=True on web-heal',
        () =>
          jsonpath(
            ['-n', APP_NS, 'get', `aitasks.v2.${G}`, 'web-heal'],
            '{.status.conditions[?(@.type=="MetricsAvailable")].status}',
          ) === 'True'
            ? true
            : undefined,
        120_000,
      ).catch((err: unknown) => {
        const task = ['-n', APP_NS, 'get', `aitasks.v2.${G}`, 'web-heal'];
        const why = `status: ${jsonpath(task, '{.status}')}\nlogs:\n${kubectl(['-n', NS, 'logs', 'deploy/aiops-operator', '--tail=40'])}`;
        throw new Error(`${(err as Error).message}\n${why}`);
      });
      exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.95);
      await eventually(
        'web scaled to 3 Ready pods',
        () =>
          jsonpath(['-n', APP_NS, 'get', 'deploy', 'web'], '{.status.readyReplicas}') === '3'
            ? true
            : undefined,
        180_000,
      );
      exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
      written.set('web-heal@v2', get('v2', 'web-heal'));
    });

    it('helm uninstall leaves the CRD and every AITask, and of the chart nothing', async () => {
      // Every AITask rewritten at v2, the storage version (as `kubectl aiops migrate-storage`
      // does), so that they read back without the webhook, which goes with the chart.
      for (const name of ['legacy', 'stable', 'rich', 'web-heal'])
        await eventually(
          `${name} rewritten at v2`,
          () =>
            kubectl(
              ['replace', '-f', '-'],
              kubectl(['get', `aitasks.v2.${G}`, name, '-n', APP_NS, '-o', 'json']),
            ),
          60_000,
        );
      const block = readmeShBlock('### Uninstalling with Helm');
      execFileSync('bash', ['-euo', 'pipefail', '-c', block], {
        cwd: root,
        env: { ...process.env, ...env(), PATH: `${dirname(helmPath())}:${process.env['PATH'] ?? ''}` },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 300_000,
      });
      assert.equal(helmOk(['list', '--all', '--namespace', NS, '--short']).stdout.trim(), '');
      // Pods and ReplicaSets go after their Deployment (garbage collection), so wait for them.
      const left = await eventually(
        'only what the operator wrote itself left in the namespace',
        () => {
          const names = kubectl([
            '-n',
            NS,
            'get',
            'deploy,rs,pods,svc,sa,role,rolebinding,pdb,secret,configmap,lease',
            '-o',
            'name',
          ])
            .trim()
            .split('\n')
            .filter((n) => n !== '' && n !== 'serviceaccount/default' && n !== 'configmap/kube-root-ca.crt')
            .sort();
          return names.every((n) => n.startsWith('secret/') || n.startsWith('lease.')) ? names : undefined;
        },
        120_000,
      );
      assert.deepEqual(left, [
        `lease.coordination.k8s.io/${LEADER_LEASE_NAME}`,
        `secret/${DEFAULT_INSTALL.conversionKeySecret}`,
      ]);
      const clusterWide = kubectl(['get', 'clusterrole,clusterrolebinding', '-o', 'name']);
      assert.doesNotMatch(clusterWide, /aiops/);
      assert.equal(
        kubectl(['get', 'crd', `aitasks.${G}`, '-o', 'name']).trim(),
        `customresourcedefinition.apiextensions.k8s.io/aitasks.${G}`,
      );
      const names = kubectl(['get', `aitasks.v2.${G}`, '-n', APP_NS, '-o', 'name'])
        .trim()
        .split('\n')
        .sort();
      assert.deepEqual(
        names,
        ['legacy', 'rich', 'stable', 'web-heal'].map((n) => `aitask.${G}/${n}`),
      );
    });

    it('tears down leaving the machine as it found it', async () => {
      for (const stop of stoppers.splice(0).reverse()) await stop();
      assert.deepEqual(machineSnapshot(), before0);
    });
  },
);
