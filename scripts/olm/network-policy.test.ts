// The shipped NetworkPolicies judged by what they admit, not by their text: a small
// evaluator of NetworkPolicy ingress semantics (a selected pod takes a connection when any
// rule of any policy selecting it allows the port and the peer; its own node always
// passes) runs a table of peers and ports against the policies of every committed install
// path, so a policy that opens the probe port to pods, closes the webhook to the apiserver or
// drops the metrics namespace selector fails here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { OPERATOR_LABELS, PORTS } from './deployment.ts';
import { METRICS_NAMESPACE_SELECTOR, NETWORK_POLICY_NAMES, networkPolicies } from './network-policy.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type Labels = Readonly<Record<string, string>>;
interface Selector {
  matchLabels?: Labels;
  matchExpressions?: unknown;
}
interface Peer {
  namespaceSelector?: Selector;
  podSelector?: Selector;
  ipBlock?: unknown;
}
interface Rule {
  from?: Peer[];
  ports?: { port: number | string; protocol?: string }[];
}
interface Policy {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: { podSelector: Selector; policyTypes?: string[]; ingress?: Rule[] };
}

/** Who connects: a pod (its namespace's and its own labels), the pod's own node, or an address off the pod network. */
type Source =
  | { readonly pod: { readonly namespace: Labels; readonly labels: Labels; readonly sameNamespace: boolean } }
  | { readonly node: 'own' }
  | { readonly address: 'outside' };

function matches(selector: Selector, labels: Labels): boolean {
  if (selector.matchExpressions !== undefined) throw new Error('matchExpressions is not evaluated here');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

function peerAdmits(peer: Peer, source: Source): boolean {
  if (peer.ipBlock !== undefined) throw new Error('ipBlock is not evaluated here');
  if (!('pod' in source)) return false;
  const { pod } = source;
  if (peer.namespaceSelector === undefined)
    return pod.sameNamespace && matches(peer.podSelector ?? {}, pod.labels);
  return matches(peer.namespaceSelector, pod.namespace) && matches(peer.podSelector ?? {}, pod.labels);
}

/** Whether a pod with `podLabels` takes a TCP connection from `source` on `port` under `policies`. */
function admits(policies: readonly Policy[], podLabels: Labels, source: Source, port: number): boolean {
  if ('node' in source) return true;
  const selecting = policies.filter(
    (p) =>
      p.kind === 'NetworkPolicy' &&
      matches(p.spec.podSelector, podLabels) &&
      (p.spec.policyTypes ?? ['Ingress']).includes('Ingress'),
  );
  if (selecting.length === 0) return true;
  return selecting.some((p) =>
    (p.spec.ingress ?? []).some(
      (rule) =>
        (rule.ports === undefined ||
          rule.ports.length === 0 ||
          rule.ports.some((r) => r.port === port && (r.protocol ?? 'TCP') === 'TCP')) &&
        (rule.from === undefined ||
          rule.from.length === 0 ||
          rule.from.some((peer) => peerAdmits(peer, source))),
    ),
  );
}

const monitoring: Source = {
  pod: {
    namespace: { ...METRICS_NAMESPACE_SELECTOR.matchLabels },
    labels: { app: 'prometheus' },
    sameNamespace: false,
  },
};
const tenant: Source = { pod: { namespace: { team: 'a' }, labels: { app: 'web' }, sameNamespace: false } };
const neighbour: Source = { pod: { namespace: {}, labels: { app: 'other' }, sameNamespace: true } };
const apiserver: Source = { address: 'outside' };
const kubelet: Source = { node: 'own' };

/** [who, port, admitted]: the ports each peer may reach, every other pair refused. */
const TABLE: readonly [string, Source, number, boolean][] = [
  ['the apiserver (no pod)', apiserver, PORTS.webhook, true],
  ['the apiserver (no pod)', apiserver, PORTS.metrics, false],
  ['the apiserver (no pod)', apiserver, PORTS.health, false],
  ['a pod in a metrics: enabled namespace', monitoring, PORTS.metrics, true],
  ['a pod in a metrics: enabled namespace', monitoring, PORTS.webhook, true],
  ['a pod in a metrics: enabled namespace', monitoring, PORTS.health, false],
  ['a tenant pod', tenant, PORTS.metrics, false],
  ['a tenant pod', tenant, PORTS.health, false],
  ['a tenant pod', tenant, PORTS.webhook, true],
  ['a pod of the install namespace', neighbour, PORTS.metrics, false],
  ['a pod of the install namespace', neighbour, PORTS.health, false],
  ['a pod of the install namespace', neighbour, 8080, false],
  ["the kubelet on the pod's own node", kubelet, PORTS.health, true],
];

/** The NetworkPolicies of a multi-document YAML text. */
function policiesOf(text: string): Policy[] {
  return (loadAll(text) as Policy[]).filter((d) => d.kind === 'NetworkPolicy');
}

const installPaths: readonly [string, () => Policy[]][] = [
  ['the generator', () => networkPolicies() as unknown as Policy[]],
  [
    'deploy/aiops-operator.yaml',
    () => policiesOf(readFileSync(join(root, 'deploy/aiops-operator.yaml'), 'utf8')),
  ],
  [
    'deploy/aiops-network-policies.yaml',
    () => policiesOf(readFileSync(join(root, 'deploy/aiops-network-policies.yaml'), 'utf8')),
  ],
  [
    'bundle/manifests',
    () => {
      const dir = join(root, 'bundle/manifests');
      return readdirSync(dir)
        .filter((f) => f.endsWith('_networkpolicy.yaml'))
        .flatMap((f) => policiesOf(readFileSync(join(dir, f), 'utf8')));
    },
  ],
];

for (const [path, load] of installPaths) {
  test(`${path}: every shipped policy, selecting the operator pods for ingress only`, () => {
    const policies = load();
    assert.deepEqual(policies.map((p) => p.metadata.name).sort(), Object.values(NETWORK_POLICY_NAMES).sort());
    for (const p of policies) {
      assert.deepEqual(p.spec.podSelector, { matchLabels: OPERATOR_LABELS }, p.metadata.name);
      assert.deepEqual(p.spec.policyTypes, ['Ingress'], `${p.metadata.name} leaves egress alone`);
    }
    const namespaces = new Set(policies.map((p) => p.metadata.namespace));
    assert.equal(namespaces.size, 1, 'all in one namespace');
  });

  test(`${path}: each peer reaches exactly its ports`, () => {
    const policies = load();
    for (const [who, source, port, admitted] of TABLE)
      assert.equal(admits(policies, OPERATOR_LABELS, source, port), admitted, `${who} -> ${port}`);
  });
}

test('the metrics peer is replaceable, and the deny policy alone refuses everyone but the own node', () => {
  const custom = networkPolicies({
    metricsPeer: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
  }) as unknown as Policy[];
  const named: Source = {
    pod: { namespace: { 'kubernetes.io/metadata.name': 'monitoring' }, labels: {}, sameNamespace: false },
  };
  assert.equal(admits(custom, OPERATOR_LABELS, named, PORTS.metrics), true);
  assert.equal(admits(custom, OPERATOR_LABELS, monitoring, PORTS.metrics), false);
  const denyOnly = custom.filter((p) => p.metadata.name === NETWORK_POLICY_NAMES.denyIngress);
  const strangers: readonly Source[] = [apiserver, monitoring, tenant, neighbour];
  for (const port of Object.values(PORTS)) {
    for (const source of strangers)
      assert.equal(admits(denyOnly, OPERATOR_LABELS, source, port), false, String(port));
    assert.equal(admits(denyOnly, OPERATOR_LABELS, kubelet, port), true);
  }
  assert.equal(
    admits(custom, { app: 'unrelated' }, tenant, PORTS.metrics),
    true,
    'other pods are not selected',
  );
});
