// Upgrade through a real OLM, as users live it: subscribed at the previous release (0.2.0,
// whose CRD stores v1) with Automatic approval, AITasks written at every version it serves,
// then the catalog is republished with the current release (1.0.0: stores v2, deprecates
// v1alpha1) and OLM upgrades on its own. Afterwards no field of any object is lost at any
// served version; a deliberately unsafe next release (its CRD drops stored v1) is refused
// by OLM and by `npm run check-upgrade` while the running operator keeps working; and
// `kubectl aiops migrate-storage`, as the README says, trims storedVersions to v2.
// Throughout, the operator reports itself in its OperatorCondition: Upgradeable=False while
// objects may still be stored at v1 (OLM holds the next release on it), True once migrated,
// and never False in the release being replaced, which would hold the upgrade under way.
//
// No published 0.2.0 image can be pulled here. The operator's code does not depend on the
// storage version, so the current build tagged v0.2.0 stands in for it; what differs
// between the two releases is their bundle (CSV, CRD, upgrade edge), which is what OLM
// upgrades and what this test checks.
import { eventually } from '../harness/wait.ts';
import { kubectlWith, type Kubectl } from '../harness/kubectl.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { csvName, operatorImage, RELEASES, type Release } from '../../api/releases.ts';
import { crdOfRelease } from '../../api/upgrade/crd-releases.ts';
import { toYaml } from '../../lib/yaml.ts';
import { buildAndInstall, kubectl as pluginKubectl } from '../support/kubectl-run.ts';
import { buildOperatorImage } from '../../scripts/image.ts';
import { tagImage } from '../../scripts/lib/images.ts';
import { channelBlobs, inlineBundleBlob, packageBlob } from '../../scripts/olm/catalog.ts';
import { buildCSV } from '../../scripts/olm/csv.ts';
import { bundleBlobPath, PATHS } from '../../scripts/olm/render.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import {
  olmUnavailable,
  OPERATORS_NAMESPACE,
  publishCatalog,
  type PublishedCatalog,
} from '../harness/olm.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { olmViews } from './olm-support.ts';
import { recordTimeline } from './upgrade-timeline.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir()) ?? olmUnavailable(defaultBinDir());
const NS = OPERATORS_NAMESPACE;
const G = 'aiops.example.com';
const [previous, current] = RELEASES.slice(-2);
const VERSIONS = ['v1alpha1', 'v1', 'v2'] as const;
/** The error of a read inside either certificate window of an upgrade (docs/install.md). */
const WINDOW_SYMPTOM = /x509: certificate signed by unknown authority/;
/** Failed reads in a row, one a second, that a window may cost before it is a regression. */
const MAX_FAILED_IN_A_ROW = 3;
/** The unsafe next release: its CRD no longer lists v1, which objects are still stored at. */
const UNSAFE: Release = { version: '1.1.0', channels: ['candidate', 'stable'], date: '2026-12-01' };
const unsafeCRD = crdOfRelease(
  { version: UNSAFE.version, versions: ['v1alpha1', 'v2'], storage: 'v2', deprecated: ['v1alpha1'] },
  { service: { namespace: NS, name: 'aiops-operator-service' } },
);

/** A file-based catalog of the package with exactly `releases`, each blob as committed. */
function catalogOf(
  dir: string,
  releases: readonly Release[],
  extra: Map<string, string> = new Map(),
): string {
  const pkg = join(dir, 'aiops-operator');
  mkdirSync(join(pkg, 'bundles'), { recursive: true });
  writeFileSync(
    join(pkg, 'package.yaml'),
    [packageBlob(), ...channelBlobs(releases)].map((b) => toYaml(b)).join('---\n'),
  );
  for (const r of releases) {
    const committed = join(root, bundleBlobPath(r.version, PATHS.inlineCatalog));
    const file = join(pkg, 'bundles', `${csvName(r.version)}.yaml`);
    const own = extra.get(r.version);
    if (own !== undefined) writeFileSync(file, own);
    else cpSync(committed, file);
  }
  return dir;
}

type Json = Record<string, unknown>;
interface Task {
  metadata: { name: string; labels?: Record<string, string> };
  spec: Json;
}

describe(
  'OLM: upgrade from the previous release through a Subscription',
  {
    skip: unavailable ?? (previous === undefined ? 'one release only' : false),
    concurrency: false,
    timeout: 1_500_000,
  },
  () => {
    assert.ok(previous && current);
    let cluster: Cluster;
    let kubectl: Kubectl;
    const stoppers: (() => Promise<void>)[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'aiops-olm-upgrade-'));
    let olm: ReturnType<typeof olmViews>;
    const written = new Map<string, Task>();
    const key = (ns: string, name: string, v: string): string => `${ns}/${name}@${v}`;
    const get = (v: string, ns: string, name: string): Task =>
      JSON.parse(kubectl(['get', `aitasks.${v}.${G}`, name, '-n', ns, '-o', 'json'])) as Task;
    const deployedImage = (): string =>
      kubectl([
        'get',
        'deploy',
        'aiops-operator',
        '-n',
        NS,
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]);
    const storedVersions = (): string[] =>
      (
        JSON.parse(
          kubectl(['get', 'crd', `aitasks.${G}`, '-o', 'jsonpath={.status.storedVersions}']),
        ) as string[]
      ).sort();
    /** Waits until the OperatorCondition of `version` shows `want`, Progressing and Degraded False. */
    const reports = (version: string, want: string[]): Promise<void> =>
      olm.operatorConditions(csvName(version), [
        ...want,
        'Degraded=False:WatchesHealthy',
        'Progressing=False:Started',
      ]);
    const allUnchanged = (): void => {
      for (const [k, want] of written) {
        const [ns = '', rest = ''] = k.split('/');
        const [name = '', v = ''] = rest.split('@');
        const got = get(v, ns, name);
        assert.deepEqual(
          { spec: got.spec, labels: got.metadata.labels },
          { spec: want.spec, labels: want.metadata.labels },
          k,
        );
      }
    };

    before(async () => {
      const image = buildOperatorImage({ log: () => undefined });
      tagImage(image, operatorImage(previous.version));
      cluster = await startCluster({
        realNode: true,
        olm: true,
        nodes: 0,
        images: [image, operatorImage(previous.version)],
        catalogDir: catalogOf(join(dir, 'previous'), RELEASES.slice(0, -1)),
      });
      stoppers.push(() => cluster.stop());
      kubectl = kubectlWith(cluster.kubeconfigPath);
      olm = olmViews(kubectl, NS);
    });
    after(async () => {
      for (const stop of stoppers.reverse()) await stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`subscribes at ${previous.version} (startingCSV, Automatic approval): its CRD stores v1`, async () => {
      kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'Subscription',
          metadata: { name: 'aiops-operator', namespace: NS },
          spec: {
            channel: 'stable',
            name: 'aiops-operator',
            source: 'aiops-catalog',
            sourceNamespace: 'olm',
            startingCSV: csvName(previous.version),
            installPlanApproval: 'Automatic',
            config: { tolerations: [REAL_NODE_TOLERATION] },
          },
        }),
      );
      await olm.stableSucceeded(csvName(previous.version));
      await reports(previous.version, ['Available=True:Reconciling', 'Upgradeable=True:StorageCurrent']);
      assert.deepEqual(olm.crdVersions(), [
        ['v1alpha1', false, false],
        ['v1', true, false],
        ['v2', false, false],
      ]);
    });

    it('AITasks of every served version are written and read back at every version', async () => {
      kubectl(['create', 'namespace', 'shop']);
      const tasks = [
        {
          apiVersion: `${G}/v1alpha1`,
          kind: 'AITask',
          metadata: { name: 'legacy', namespace: 'shop', labels: { team: 'a' } },
          spec: { target: 'web', threshold: 75, action: 'Noop', interval: '45s' },
        },
        {
          apiVersion: `${G}/v1`,
          kind: 'AITask',
          metadata: { name: 'stable', namespace: 'shop' },
          spec: { targetDeployment: 'api', threshold: 0.5, action: 'scale_up', intervalSeconds: 30 },
        },
        {
          apiVersion: `${G}/v2`,
          kind: 'AITask',
          metadata: { name: 'rich', namespace: 'shop' },
          spec: {
            target: { kind: 'Deployment', name: 'cache' },
            trigger: { query: 'up{job="cache"}', threshold: 0.25, operator: 'LessThan', forSeconds: 20 },
            remediation: {
              action: 'ScaleUp',
              scale: { step: 2, minReplicas: 1, maxReplicas: 5 },
              cooldownSeconds: 120,
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
        for (const v of VERSIONS)
          written.set(key('shop', t.metadata.name, v), get(v, 'shop', t.metadata.name));
      assert.equal(
        (written.get('shop/rich@v2')?.spec['remediation'] as Json | undefined)?.['maxAttempts'],
        2,
      );
      assert.deepEqual(storedVersions(), ['v1']);
    });

    let published: PublishedCatalog | undefined;
    it(`a republished catalog with ${current.version}: OLM upgrades on its own, every field of every object kept`, async (t) => {
      published = await publishCatalog(
        cluster.binDir,
        cluster.kubeconfigPath,
        join(root, 'bundle/catalog-inline'),
      );
      stoppers.push(() => published?.stop() ?? Promise.resolve());
      // Reads that need conversion, once a second through the upgrade. docs/install.md says a
      // read fails only inside one of two windows the operator closes (x509 unknown authority)
      // and only briefly. How many windows there are is OLM's doing (each time its InstallPlan
      // writes the bundle's CRD, more when a loaded machine makes it retry, plus each pod it
      // replaces), so what is asserted is the cause of every failure and that none lasts: at
      // most MAX_FAILED_IN_A_ROW failed reads in a row (the causes and the timeline are reported).
      const upgrade = { running: true };
      const timeline = recordTimeline({
        kubeconfig: cluster.kubeconfigPath,
        namespace: NS,
        crd: `aitasks.${G}`,
        secret: 'aiops-operator-service-cert',
        selector: 'app.kubernetes.io/name=aiops-operator',
      });
      const failed: number[] = [];
      const why = new Map<string, number>();
      const causes = new Set<string>();
      let samples = 0;
      let inARow = 0;
      let mostInARow = 0;
      const sampler = (async () => {
        while (upgrade.running) {
          samples++;
          try {
            kubectl(['get', `aitasks.v2.${G}`, 'stable', '-n', 'shop', '-o', 'name']);
            inARow = 0;
          } catch (err) {
            failed.push(Date.now());
            mostInARow = Math.max(mostInARow, ++inARow);
            const text = (err as Error).message;
            const cause = /conversion webhook[^\n]*?: Post "[^"]*": ([^\n]*)/.exec(text)?.[1] ?? text;
            causes.add(cause);
            const short = cause.replace(/\d+\.\d+\.\d+\.\d+:\d+/g, '<addr>').slice(0, 120);
            timeline.mark(`read failed: ${short}`);
            // The CRD's caBundle just after: none (an InstallPlan's bundle copy of the CRD), the
            // CA now in OLM's Secret (pods not yet serving its certificate), or another.
            const bundle = kubectl([
              'get',
              'crd',
              `aitasks.${G}`,
              '-o',
              'jsonpath={.spec.conversion.webhook.clientConfig.caBundle}',
            ]);
            const olmCA = kubectl([
              'get',
              'secret',
              'aiops-operator-service-cert',
              '-n',
              NS,
              '-o',
              'jsonpath={.data.olmCAKey}',
            ]);
            const ca = bundle === '' ? 'none' : bundle === olmCA ? "OLM's current CA" : 'another CA';
            const key = `${short}; CRD caBundle: ${ca}`;
            why.set(key, (why.get(key) ?? 0) + 1);
          }
          await new Promise((r) => setTimeout(r, 1000));
        }
      })();
      await olm.stableSucceeded(csvName(current.version)).finally(() => (upgrade.running = false));
      await sampler;
      const happened = timeline.stop();
      t.diagnostic(
        `reads needing conversion that failed during the upgrade: ${failed.length}` +
          (failed.length > 0
            ? ` over ${((failed.at(-1) ?? 0) - (failed[0] ?? 0)) / 1000} s, at most ${mostInARow} in a row`
            : ''),
      );
      for (const [cause, n] of why) t.diagnostic(`  ${n}× ${cause}`);
      if (failed.length > 0) t.diagnostic(`the upgrade as it happened:\n${happened.join('\n')}`);
      assert.ok(samples > 0, 'the sampler read at least once during the upgrade');
      const reported = [...why].map(([c, n]) => `${n}× ${c}`).join('; ');
      assert.deepEqual(
        [...causes].filter((c) => !WINDOW_SYMPTOM.test(c)),
        [],
        `every failed read is one of the two certificate windows (docs/install.md): ${reported}`,
      );
      assert.ok(
        mostInARow <= MAX_FAILED_IN_A_ROW,
        `${mostInARow} reads needing conversion failed in a row during the upgrade (docs/install.md: briefly, at most ${MAX_FAILED_IN_A_ROW}); ${failed.length} of ${samples} failed: ${reported}`,
      );
      await eventually(
        `${csvName(previous.version)} replaced and removed`,
        () => (olm.csvPhase(csvName(previous.version)) === undefined ? true : undefined),
        120_000,
      );
      assert.equal(deployedImage(), operatorImage(current.version));
      assert.deepEqual(olm.crdVersions(), [
        ['v1alpha1', false, true],
        ['v1', false, false],
        ['v2', true, false],
      ]);
      allUnchanged();
      assert.deepEqual(storedVersions(), ['v1', 'v2']);
      await reports(current.version, [
        'Available=True:Reconciling',
        'Upgradeable=False:StorageMigrationNeeded',
      ]);
    });

    it('an unsafe next release (its CRD drops stored v1) is refused by OLM and by check-upgrade; the operator keeps working', async () => {
      const csv = buildCSV(UNSAFE, [...RELEASES, UNSAFE]);
      const blob = toYaml(inlineBundleBlob(UNSAFE, csv, unsafeCRD));
      const next = await publishCatalog(
        cluster.binDir,
        cluster.kubeconfigPath,
        catalogOf(join(dir, 'unsafe'), [...RELEASES, UNSAFE], new Map([[UNSAFE.version, blob]])),
      );
      stoppers.push(() => next.stop());
      const failed = await eventually(
        `OLM to refuse ${csvName(UNSAFE.version)}`,
        () => {
          const plans = JSON.parse(kubectl(['get', 'installplan', '-n', NS, '-o', 'json'])) as {
            items: {
              spec: { clusterServiceVersionNames: string[] };
              status?: { phase?: string; conditions?: { message?: string }[] };
            }[];
          };
          const plan = plans.items.find((p) =>
            p.spec.clusterServiceVersionNames.includes(csvName(UNSAFE.version)),
          );
          return plan?.status?.phase === 'Failed'
            ? (plan.status.conditions ?? []).map((c) => c.message).join(' ')
            : undefined;
        },
        300_000,
      );
      assert.match(failed, /v1/, failed);
      assert.match(failed, /stored version|storedVersions|data loss/i, failed);
      // The running release says a migration is due, and OLM holds its successor on that.
      await eventually(
        `OLM to hold ${csvName(UNSAFE.version)} on ${csvName(current.version)}'s Upgradeable=False`,
        () =>
          kubectl(['get', 'csv', csvName(UNSAFE.version), '-n', NS, '-o', 'jsonpath={.status.reason}']) ===
          'OperatorConditionNotUpgradeable'
            ? true
            : undefined,
        120_000,
      );
      // OLM has created the new CSV (held, as above) and marked the running one Replacing,
      // but never got to the CRD or the Deployment: the operator is untouched.
      assert.notEqual(olm.csvPhase(csvName(UNSAFE.version)), 'Succeeded');
      assert.match(olm.csvPhase(csvName(current.version)) ?? '', /^(Succeeded|Replacing)$/);
      assert.equal(deployedImage(), operatorImage(current.version));
      assert.equal(
        kubectl(['get', 'crd', `aitasks.${G}`, '-o', 'jsonpath={.spec.versions[*].name}']),
        'v1alpha1 v1 v2',
        'the CRD is the one 1.0.0 installed',
      );

      const candidate = join(dir, 'unsafe-crd.yaml');
      writeFileSync(candidate, toYaml(unsafeCRD));
      const check = spawnSync('npm', ['run', '-s', 'check-upgrade', '--', '--candidate', candidate], {
        cwd: root,
        encoding: 'utf8',
      });
      assert.equal(check.status, 1, check.stdout + check.stderr);
      assert.match(check.stdout, /candidate .*UNSAFE\n.*v1: .*storedVersionRemoved/);

      kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: `${G}/v2`,
          kind: 'AITask',
          metadata: { name: 'after-refusal', namespace: 'shop' },
          spec: {
            target: { kind: 'Deployment', name: 'missing' },
            trigger: { threshold: 1 },
            remediation: { action: 'Noop' },
          },
        }),
      );
      await eventually(
        'the running operator to reconcile a new AITask',
        () => {
          const t = get('v2', 'shop', 'after-refusal') as Task & { status?: { phase?: string } };
          return t.status?.phase;
        },
        120_000,
      );
      allUnchanged();
      await next.stop();
    });

    it('kubectl aiops migrate-storage, as the README says, moves every object to v2 and trims storedVersions', async () => {
      const run = await pluginKubectl(buildAndInstall(), [
        'aiops',
        'migrate-storage',
        `--kubeconfig=${cluster.kubeconfigPath}`,
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /storedVersions: v1, v2 → v2/);
      assert.deepEqual(storedVersions(), ['v2']);
      allUnchanged();
      await reports(current.version, ['Available=True:Reconciling', 'Upgradeable=True:StorageCurrent']);
    });
  },
);
