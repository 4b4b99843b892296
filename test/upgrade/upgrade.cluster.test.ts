// CRD upgrades on a live cluster of its own, release by release (the seed's 0.1.0 → 0.2.0 →
// 1.0.0 from api/upgrade/crd-releases.ts): objects written at each stage (the seed's with
// its "default" namespace, v2 objects stored at v1) read back in every served version with
// no field lost, old objects updated through old versions keep their newer fields, then
// storage migration (interrupted once, then resumed) moves every object to v2 in etcd and
// trims storedVersions, which is what makes dropping v1 safe.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from '../harness/cluster.ts';
import { startWebhookServer } from '../../conversion-webhook/server.ts';
import { createLogger } from '../../lib/log.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { installCRD, crdClient } from '../../scripts/lib/crd-install.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { AITaskClient } from '../../api/aitask-client.ts';
import { CRD_RELEASES, crdOfRelease } from '../../api/upgrade/crd-releases.ts';
import { checkUpgrade } from '../../api/upgrade/safety.ts';
import { migrateStorage, MigrationRefused } from '../../api/upgrade/migrate.ts';
import { CONVERSION_ANNOTATION } from '../../api/install.ts';
import { storedVersions } from './etcd.ts';
import { buildAndInstall, kubectl } from '../support/kubectl-run.ts';

const G = 'aiops.example.com';
const NS = 'upgrade';

test('upgrade 0.1.0 → 0.2.0 → 1.0.0, then migrate storage', async (t) => {
  const cluster = await startCluster();
  const dir = mkdtempSync(join(tmpdir(), 'aiops-upgrade-'));
  const cert = createServingCert(dir);
  const webhook = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('webhook', { level: 'error' }),
  });
  t.after(async () => {
    await webhook.close(1000);
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const conversion = {
    url: `https://127.0.0.1:${webhook.port}/convert`,
    caBundle: Buffer.from(cert.caPem).toString('base64'),
  };
  const transport = await KubeTransport.create({ kubeconfig: cluster.kubeconfigPath });
  const [r010, r020, r100] = CRD_RELEASES;
  assert.ok(r010 && r020 && r100);
  await transport.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
  const alpha = new AITaskClient(transport, 'v1alpha1');
  const one = new AITaskClient(transport, 'v1');

  const v2 = new AITaskClient(transport, 'v2');
  const rich = {
    target: { kind: 'Deployment' as const, name: 'web' },
    trigger: {
      query: 'sum(rate(http_errors_total[1m]))',
      threshold: 0.075,
      operator: 'LessThan' as const,
      forSeconds: 30,
    },
    remediation: {
      action: 'ScaleUp' as const,
      scale: { step: 2, minReplicas: 1, maxReplicas: 6 },
      cooldownSeconds: 90,
      maxAttempts: 2,
    },
    // Stated, since v1 defaults it to 60 and the object is stored at v1 under 0.2.0.
    intervalSeconds: 60,
    dryRun: true,
    approval: 'Manual' as const,
  };

  await installCRD(transport, crdOfRelease(r010));
  await one.create(NS, {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: 'one-0' },
    spec: { targetDeployment: 'web', threshold: 0.33, action: 'scale_down', intervalSeconds: 45 },
  });
  await one.create(NS, {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: 'one-1' },
    spec: { targetDeployment: 'api', namespace: 'shop', threshold: 1.5, action: 'noop' },
  });
  await one.patchStatus(NS, 'one-1', { phase: 'Monitoring' });
  assert.equal((await one.get(NS, 'one-0')).spec.namespace, 'default', "the seed's default is persisted");

  const alphaSpecs = [
    { target: 'web', threshold: 80, action: 'RestartPod' as const },
    { target: 'shop/api', threshold: 7, action: 'ScaleUp' as const, interval: '300s' },
    {
      target: 'db',
      threshold: 100,
      action: 'CordonNode' as const,
      interval: '1h',
      llmEndpoint: 'https://llm.example.com/v1/chat/completions',
    },
    { target: 'cache', threshold: 0, action: 'Noop' as const, interval: '90s' },
  ];
  const expectedAlpha = new Map<string, unknown>();

  await t.test(
    '0.2.0: v1alpha1 and v2 objects join (stored at v1), everything reads in every version',
    async () => {
      await installCRD(transport, crdOfRelease(r020, conversion));
      for (const [i, spec] of alphaSpecs.entries()) {
        const name = `alpha-${i}`;
        await alpha.create(NS, { apiVersion: `${G}/v1alpha1`, kind: 'AITask', metadata: { name }, spec });
        const withStatus = await alpha.patchStatus(NS, name, {
          phase: i % 2 ? 'Healed' : 'Monitoring',
          message: `status ${i}`,
        });
        expectedAlpha.set(name, { spec: withStatus.spec, status: withStatus.status });
      }
      await v2.create(NS, { apiVersion: `${G}/v2`, kind: 'AITask', metadata: { name: 'two-0' }, spec: rich });
      assert.deepEqual((await v2.get(NS, 'two-0')).spec, rich, 'v2-only fields survive storage at v1');
      for (const [name, want] of expectedAlpha) {
        const got = await alpha.get(NS, name);
        assert.deepEqual({ spec: got.spec, status: got.status }, want, `${name} at v1alpha1`);
        assert.equal((await one.get(NS, name)).metadata.name, name);
      }
      assert.equal((await alpha.get(NS, 'one-0')).spec.threshold, 33);
      assert.equal((await alpha.get(NS, 'one-1')).spec.target, 'shop/api');
      assert.equal((await v2.get(NS, 'one-0')).spec.target.namespace, 'default', 'the old default stays');
      const stored = new Set((await storedVersions(cluster.ports.etcd)).values());
      assert.deepEqual([...stored], [`${G}/v1`]);
    },
  );

  await t.test(
    '1.0.0: v2 objects with v2-only fields; every object in every version; old versions update without loss',
    async () => {
      await installCRD(transport, crdOfRelease(r100, conversion));
      await v2.create(NS, { apiVersion: `${G}/v2`, kind: 'AITask', metadata: { name: 'two-1' }, spec: rich });
      const all = await v2.listAll(NS);
      assert.equal(all.items.length, 8);
      for (const item of all.items) {
        const name = item.metadata.name ?? '';
        for (const c of [alpha, one, v2])
          assert.equal((await c.get(NS, name)).metadata.name, name, `${name} reads at ${c.version}`);
      }
      for (const [name, want] of expectedAlpha) {
        const got = await alpha.get(NS, name);
        assert.deepEqual({ spec: got.spec, status: got.status }, want, `${name} unchanged at v1alpha1`);
      }
      const old = await alpha.get(NS, 'two-0');
      await alpha.replace(NS, 'two-0', { ...old, spec: { ...old.spec, threshold: 50 } });
      const after = await v2.get(NS, 'two-0');
      assert.deepEqual(
        after.spec,
        { ...rich, trigger: { ...rich.trigger, threshold: 0.5 } },
        'only the threshold changed',
      );
      const mid = await one.get(NS, 'alpha-1');
      await one.replace(NS, 'alpha-1', { ...mid, spec: { ...mid.spec, action: 'scale_down' } });
      const back = await alpha.get(NS, 'alpha-1');
      assert.deepEqual(
        back.spec,
        { ...alphaSpecs[1], action: 'ScaleDown' },
        '"300s" survives a write through v1',
      );
      expectedAlpha.set('alpha-1', { spec: back.spec, status: back.status });
    },
  );

  // A later release that has deprecated v1 too, and the one after it that serves only v2.
  const deprecatingV1 = { ...r100, version: '1.1.0', deprecated: ['v1alpha1', 'v1'] as const };
  const hypothetical = {
    version: '2.0.0',
    versions: ['v2'] as const,
    storage: 'v2' as const,
    deprecated: [],
  };

  await t.test('before migration: objects sit at v1 and v2 in etcd, and dropping v1 is unsafe', async () => {
    const stored = new Set((await storedVersions(cluster.ports.etcd)).values());
    assert.deepEqual([...stored].sort(), [`${G}/v1`, `${G}/v2`]);
    const crd = await crdClient(transport).get(undefined, `aitasks.${G}`);
    assert.deepEqual(crd.status?.storedVersions, ['v1', 'v2']);
    const findings = checkUpgrade(
      crdOfRelease(deprecatingV1, conversion),
      crdOfRelease(hypothetical, conversion),
      crd.status.storedVersions,
    );
    assert.deepEqual(
      findings.map((f) => [f.rule, f.version]),
      [['storedVersionRemoved', 'v1']],
    );
  });

  await t.test('an interrupted migration changes nothing it cannot finish; the rerun completes', async () => {
    const abort = new AbortController();
    await assert.rejects(
      migrateStorage(transport, { pageSize: 3, signal: abort.signal, onProgress: () => abort.abort() }),
      (e: unknown) => e instanceof MigrationRefused && /aborted/.test(e.message),
    );
    const crd = await crdClient(transport).get(undefined, `aitasks.${G}`);
    assert.deepEqual(
      crd.status?.storedVersions,
      ['v1', 'v2'],
      'storedVersions untouched by the interrupted run',
    );
    const midway = [...(await storedVersions(cluster.ports.etcd)).values()];
    assert.ok(midway.filter((v) => v === `${G}/v2`).length >= 3, 'the first page was rewritten');
    assert.ok(
      midway.some((v) => v !== `${G}/v2`),
      'the rest was not',
    );

    const path = buildAndInstall();
    const cli = (...args: string[]) =>
      kubectl(path, ['aiops', 'migrate-storage', `--kubeconfig=${cluster.kubeconfigPath}`, ...args]);
    const dry = await cli('--dry-run', '-o', 'json');
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), {
      seen: 8,
      rewritten: 0,
      vanished: 0,
      storageVersion: 'v2',
      storedVersionsBefore: ['v1', 'v2'],
      storedVersionsAfter: ['v1', 'v2'],
      dryRun: true,
    });

    const run = await cli('--page-size', '3');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /migrated 3 AITasks/, 'progress per page');
    assert.match(
      run.stdout,
      /8 AITasks now stored at v2 \(\d+ rewritten, \d+ already current\)\nstoredVersions: v1, v2 → v2/,
    );
    const stored = await storedVersions(cluster.ports.etcd);
    assert.deepEqual(new Set(stored.values()), new Set([`${G}/v2`]), 'every object is stored at v2');
  });

  await t.test('after migration: nothing lost, and dropping v1 passes the safety check', async () => {
    for (const [name, want] of expectedAlpha) {
      const got = await alpha.get(NS, name);
      assert.deepEqual({ spec: got.spec, status: got.status }, want, `${name} survived migration`);
    }
    const two = await v2.get(NS, 'two-0');
    assert.deepEqual(two.spec, { ...rich, trigger: { ...rich.trigger, threshold: 0.5 } });
    assert.equal(two.metadata.annotations?.[CONVERSION_ANNOTATION], undefined);
    assert.deepEqual((await v2.get(NS, 'two-1')).spec, rich);
    assert.equal((await one.get(NS, 'one-0')).spec.namespace, 'default');
    const crd = await crdClient(transport).get(undefined, `aitasks.${G}`);
    assert.deepEqual(
      checkUpgrade(
        crdOfRelease(deprecatingV1, conversion),
        crdOfRelease(hypothetical, conversion),
        crd.status?.storedVersions ?? [],
      ),
      [],
    );
  });

  await t.test('migration refuses while the conversion webhook is unreachable', async () => {
    await webhook.close(500);
    await assert.rejects(
      migrateStorage(transport),
      (e: unknown) => e instanceof MigrationRefused && /conversion webhook looks unreachable/.test(e.message),
    );
  });
});
