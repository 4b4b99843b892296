// The operator process' parts, added to one manager: the operator (operator/assembly.ts),
// the conversion webhook it hosts with --webhook-port (hosted-webhook.ts), the OLM
// OperatorCondition reporting when OLM names one, and --migrate-storage-on-start
// (storage-migration.ts). It is the one place those rooms meet; neither imports the other.

import { KubeTransport } from '../../lib/kube/transport.ts';
import { createMetrics } from '../../conversion-webhook/metrics.ts';
import { assembleOperator, type AssembledOperator, type OperatorOptions } from '../../operator/assembly.ts';
import { aborted, PART } from '../../operator/assembly-parts.ts';
import {
  operatorConditionRef,
  reportOperatorCondition,
} from '../../operator/olm/operator-condition-writer.ts';
import { metricsServingCert } from '../../operator/runtime/metrics-cert.ts';
import { Manager, type Runnable } from '../../operator/runtime/manager.ts';
import { hostedWebhookPart, type HostedWebhookFlags } from './hosted-webhook.ts';
import { storageMigrationPart } from './storage-migration.ts';

/** While OLM names an OperatorCondition (OPERATOR_CONDITION_NAME): the leader reports the replica's health in it. */
function operatorConditionPart(
  transport: () => Promise<KubeTransport>,
  o: OperatorOptions,
  op: AssembledOperator,
): Runnable | undefined {
  const ref = operatorConditionRef();
  if (ref === undefined) return undefined;
  return {
    name: 'operator-condition',
    startAfter: [PART.servers],
    async run(signal, ready) {
      const stop = reportOperatorCondition({
        transport: await transport(),
        ref,
        health: () => op.health(),
        log: o.log.with({ component: 'operator-condition' }),
      });
      ready();
      await aborted(signal);
      stop();
    },
  };
}

/** The manager of every part of the operator process, not yet started. */
export async function operatorProcess(o: OperatorOptions, f: HostedWebhookFlags): Promise<Manager> {
  const manager = new Manager();
  // The process' one transport for the hosted webhook's certificate, the OperatorCondition and the startup migration.
  let shared: Promise<KubeTransport> | undefined;
  const transport = (): Promise<KubeTransport> =>
    (shared ??= KubeTransport.create({
      ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
      ...(o.context ? { context: o.context } : {}),
    }));
  // The hosted webhook's series are served on the operator's /metrics (behind TokenReview and
  // SubjectAccessReview when secure); the webhook port serves none. It starts beside the
  // operator: each waits on the apiserver while the other runs, and /readyz waits for both,
  // so the Service sends no conversion here before the webhook serves.
  let hosting: Partial<OperatorOptions> = {};
  if (f.webhookPort !== undefined) {
    const metrics = createMetrics(false);
    let serving = false;
    manager.add(
      hostedWebhookPart(f, {
        port: f.webhookPort,
        host: o.bindAddress,
        metrics,
        transport,
        namespace: process.env['POD_NAMESPACE'] ?? o.leaderElectionNamespace,
        log: o.log,
        onServing: () => (serving = true),
      }),
    );
    hosting = { hostedMetrics: metrics.registry, hostedReady: () => serving };
  }
  const metricsTLS = () =>
    metricsServingCert({
      ...(o.metricsCertPath !== undefined ? { dir: o.metricsCertPath } : {}),
      certName: o.metricsCertName,
      keyName: o.metricsCertKey,
      log: o.log.with({ component: 'metrics' }),
    });
  const op = await assembleOperator(
    { ...o, ...hosting, ...(o.metricsSecure ? { metricsTLS } : {}) },
    manager,
  );
  const condition = operatorConditionPart(transport, o, op);
  if (condition !== undefined) manager.add(condition);
  if (f.migrateStorageOnStart) manager.add(storageMigrationPart(transport, o.log));
  return manager;
}
