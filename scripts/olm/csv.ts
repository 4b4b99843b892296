// The ClusterServiceVersion of the current release: metadata OperatorHub shows, the owned
// CRD versions with descriptors and examples, the install strategy (the operator
// Deployment and exactly the RBAC of api/rbac.ts), the conversion webhook, and the upgrade
// edges of the default channel.

import { CRD_NAME, KIND } from '../../api/schema/common.ts';
import { VERSIONS } from '../../api/crd.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { OPERATOR_CLUSTER_RULES, OPERATOR_NAMESPACE_RULES } from '../../api/rbac.ts';
import { DEFAULT_CHANNEL, csvName, operatorImage, type Release } from '../../api/releases.ts';
import { descriptors, EXAMPLES } from './descriptors.ts';
import { deploymentSpec, OPERATOR_LABELS, PORTS, WEBHOOK_SERVICE_PORT } from './deployment.ts';
import { channelEntries } from './graph.ts';
import { argoRolloutsGrantYaml } from './target-kinds.ts';
import { ICON } from './icon.ts';

/** Oldest Kubernetes the operator supports: CRD validation rules (CEL) are GA from 1.29. */
export const MIN_KUBE_VERSION = '1.29.0';

const SHORT_DESCRIPTION =
  'Self-healing for Deployments: watch a metric, decide by rules or an advisory LLM, and remediate safely.';

const DESCRIPTION = `The AIOps operator turns an SRE runbook step into a level-triggered control loop.

An \`AITask\` says: watch Deployment or StatefulSet X; when its metric crosses a threshold for long
enough, run remediation Y — restart one pod through the Eviction API, scale within bounds, cordon the
node of the worst pod, or just record — optionally asking an OpenAI-compatible LLM to confirm first.

**Safety first:** cooldowns per target, a maximum number of attempts, dry-run, pause, manual approval,
cluster-wide caps on concurrent remediations and cordoned nodes. Every decision and action is written to
the task's status before it runs and reported as a Kubernetes Event; a restarted operator verifies an
action's effect instead of acting twice.

**Versions:** \`aiops.example.com/v2\` is the storage version; \`v1\` and the deprecated \`v1alpha1\` are
served through a lossless conversion webhook that runs in the operator's pods.

Install it for all namespaces. Debug it with the \`kubectl aiops\` plugin (\`describe\`, \`explain-phase\`,
\`generation-diff\`, \`force-finalize\`).

**Other kinds:** a v2 AITask may also target any kind that serves the \`/scale\` subresource (an Argo
Rollout, an operator's own kind), once an admin grants it: this CSV grants Deployments and
StatefulSets only, and a task on an ungranted kind reports \`TargetRefused\` naming the missing rule.
Per kind, the operator needs \`get\` and \`update\` on \`<plural>/scale\` in the kind's API group, and
\`list\` on each intermediate controller between the kind and its pods other than ReplicaSets. Grant it
with a ClusterRole bound to the operator's ServiceAccount \`aiops-operator\` in the namespace the
operator is installed in; for Argo Rollouts, with the operator in \`operators\`:

\`\`\`yaml
${argoRolloutsGrantYaml('operators')}\`\`\``;

/** A ClusterServiceVersion (operators.coreos.com/v1alpha1), typed as far as the generator reads it. */
export interface ClusterServiceVersion {
  apiVersion: 'operators.coreos.com/v1alpha1';
  kind: 'ClusterServiceVersion';
  metadata: { name: string; annotations: Record<string, string>; labels: Record<string, string> };
  spec: Record<string, unknown> & {
    version: string;
    replaces?: string;
    skips?: string[];
    relatedImages: { name: string; image: string }[];
  };
}

/**
 * The Secret OLM keeps the webhook's serving certificate in (`<deployment>-service-cert`,
 * beside its Service `<deployment>-service`); the operator reads it through the API so a new
 * certificate is served before the kubelet refreshes the mounted copy.
 */
const OLM_SERVICE_CERT_SECRET = `${DEFAULT_INSTALL.deployment}-service-cert`;

/** The CSV of `release`, whose upgrade edges come from the default channel of `releases`. */
export function buildCSV(release: Release, releases: readonly Release[]): ClusterServiceVersion {
  const name = csvName(release.version);
  const image = operatorImage(release.version);
  const edge = channelEntries(releases, DEFAULT_CHANNEL, csvName).find((e) => e.name === name);
  const examples = VERSIONS.map((v) => EXAMPLES[v]);
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name,
      annotations: {
        'alm-examples': JSON.stringify(examples, null, 2),
        capabilities: 'Seamless Upgrades',
        categories: 'AI/Machine Learning,Monitoring',
        containerImage: image,
        createdAt: `${release.date}T00:00:00Z`,
        description: SHORT_DESCRIPTION,
        'operatorframework.io/suggested-namespace': DEFAULT_INSTALL.namespace,
        support: 'aiops maintainers',
        ...(edge?.skipRange !== undefined ? { 'olm.skipRange': edge.skipRange } : {}),
      },
      // Only the architecture the image is built for and run on in the tests (npm run image
      // builds the host's); arm64 is claimed once an arm64 image is built and run.
      labels: {
        'operatorframework.io/arch.amd64': 'supported',
        'operatorframework.io/os.linux': 'supported',
      },
    },
    spec: {
      displayName: 'AIOps Operator',
      description: DESCRIPTION,
      version: release.version,
      ...(edge?.replaces !== undefined ? { replaces: edge.replaces } : {}),
      ...(edge?.skips !== undefined ? { skips: [...edge.skips] } : {}),
      minKubeVersion: MIN_KUBE_VERSION,
      maturity: 'stable',
      keywords: ['aiops', 'self-healing', 'remediation', 'autoscaling', 'sre', 'llm'],
      maintainers: [{ name: 'aiops maintainers', email: 'maintainers@aiops.example.com' }],
      provider: { name: 'aiops project', url: 'https://aiops.example.com' },
      links: [
        { name: 'Documentation', url: 'https://aiops.example.com/docs' },
        { name: 'Upgrade guide', url: 'https://aiops.example.com/docs/upgrades' },
      ],
      icon: [ICON],
      installModes: [
        { type: 'OwnNamespace', supported: false },
        { type: 'SingleNamespace', supported: false },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: { owned: VERSIONS.map((v) => owned(v)) },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: DEFAULT_INSTALL.deployment,
              label: { ...OPERATOR_LABELS },
              spec: deploymentSpec({
                image,
                extraArgs: [`--webhook-cert-from-secret=${OLM_SERVICE_CERT_SECRET}`],
              }),
            },
          ],
          permissions: [
            { serviceAccountName: DEFAULT_INSTALL.serviceAccount, rules: OPERATOR_NAMESPACE_RULES },
          ],
          clusterPermissions: [
            { serviceAccountName: DEFAULT_INSTALL.serviceAccount, rules: OPERATOR_CLUSTER_RULES },
          ],
        },
      },
      webhookdefinitions: [
        {
          type: 'ConversionWebhook',
          generateName: `conversion.${CRD_NAME}`,
          deploymentName: DEFAULT_INSTALL.deployment,
          containerPort: WEBHOOK_SERVICE_PORT,
          targetPort: PORTS.webhook,
          webhookPath: '/convert',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          conversionCRDs: [CRD_NAME],
        },
      ],
      relatedImages: [{ name: 'aiops-operator', image }],
    },
  };
}

function owned(version: (typeof VERSIONS)[number]): Record<string, unknown> {
  const deprecated = version === 'v1alpha1' ? ' Deprecated: use v2.' : '';
  return {
    name: CRD_NAME,
    version,
    kind: KIND,
    displayName: 'AI Task',
    description: `A self-healing rule: the target to watch, when it is in breach, and how to remediate.${deprecated}`,
    resources: [
      { kind: 'Deployment', name: '', version: 'v1' },
      { kind: 'Pod', name: '', version: 'v1' },
      { kind: 'Node', name: '', version: 'v1' },
      { kind: 'ControllerRevision', name: '', version: 'v1' },
      { kind: 'Event', name: '', version: 'v1' },
    ],
    ...descriptors(version),
  };
}
