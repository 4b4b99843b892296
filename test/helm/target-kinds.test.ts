// Kinds beyond Deployments and StatefulSets, granted the same way in every install path: the rules
// of one grant (scripts/olm/target-kinds.ts), the ClusterRole and ClusterRoleBinding that
// docs/install.md and the CSV's description show (each exactly the generated grant), and the Helm
// chart's `targetKinds` value rendered by the real helm: its rules appended to the operator's
// ClusterRole, none for the default empty list, and a malformed entry refused by `helm template`
// with a message naming it. Nothing here needs a cluster.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OPERATOR_CLUSTER_RULES, type PolicyRule } from '../../api/rbac.ts';
import { RELEASES } from '../../api/releases.ts';
import { fromYaml } from '../../lib/yaml.ts';
import { buildCSV } from '../../scripts/olm/csv.ts';
import { CHART_DIR } from '../../scripts/olm/helm.ts';
import { argoRolloutsGrantYaml, targetKindRules, type TargetKind } from '../../scripts/olm/target-kinds.ts';
import { ROOT } from '../olm/validators.ts';
import { docBlock } from './doc-block.ts';
import { helmWithTargetKinds, objectsOf, operatorClusterRules, skipUnlessHelm } from './helm.ts';

const CHART = join(ROOT, CHART_DIR);
const HEADING = '## Targeting other kinds';

/** The operator ClusterRole's rules rendered with `targetKinds`, or helm's failure. */
function renderRules(targetKinds: unknown): { rules?: PolicyRule[]; stderr: string } {
  const r = helmWithTargetKinds('template', CHART, targetKinds);
  if (r.code !== 0) return { stderr: r.stderr };
  return { rules: operatorClusterRules(objectsOf(r.stdout)) as PolicyRule[], stderr: r.stderr };
}

describe('targetKindRules', () => {
  it('grants get and update on each resource’s /scale and list on each owner, in its group', () => {
    const table: [TargetKind, PolicyRule[]][] = [
      [
        { apiGroup: 'argoproj.io', resources: ['rollouts'] },
        [{ apiGroups: ['argoproj.io'], resources: ['rollouts/scale'], verbs: ['get', 'update'] }],
      ],
      [
        { apiGroup: 'example.com', resources: ['shards', 'pools'], ownerResources: ['shardsets'] },
        [
          {
            apiGroups: ['example.com'],
            resources: ['shards/scale', 'pools/scale'],
            verbs: ['get', 'update'],
          },
          { apiGroups: ['example.com'], resources: ['shardsets'], verbs: ['list'] },
        ],
      ],
      [
        { apiGroup: '', resources: ['replicationcontrollers'], ownerResources: [] },
        [{ apiGroups: [''], resources: ['replicationcontrollers/scale'], verbs: ['get', 'update'] }],
      ],
      [
        { apiGroup: 'example.com', resources: [], ownerResources: ['shardsets'] },
        [{ apiGroups: ['example.com'], resources: ['shardsets'], verbs: ['list'] }],
      ],
    ];
    for (const [kind, rules] of table) assert.deepEqual(targetKindRules(kind), rules, JSON.stringify(kind));
  });
});

describe('the documented grant', () => {
  it('docs/install.md shows exactly the generated ClusterRole and ClusterRoleBinding', () => {
    assert.equal(
      docBlock('docs/install.md', HEADING, 'yaml', 'kind: ClusterRoleBinding'),
      argoRolloutsGrantYaml(),
    );
  });

  it("the CSV's description shows it with the operator in the Subscription's namespace", () => {
    const current = RELEASES.at(-1);
    assert.ok(current);
    const description = String(buildCSV(current, RELEASES).spec['description']);
    assert.ok(description.includes(`\`\`\`yaml\n${argoRolloutsGrantYaml('operators')}\`\`\``), description);
  });
});

describe('Helm chart targetKinds', { skip: skipUnlessHelm() }, () => {
  it('renders no extra rule for the default empty list', () => {
    assert.deepEqual(renderRules([]).rules, OPERATOR_CLUSTER_RULES);
  });

  it("appends each entry's rules to the operator's ClusterRole", () => {
    const kinds: TargetKind[] = [
      { apiGroup: 'argoproj.io', resources: ['rollouts'] },
      { apiGroup: 'test.aiops.example.com', resources: ['shards', 'pools'], ownerResources: ['shardsets'] },
      { apiGroup: '', resources: ['replicationcontrollers'], ownerResources: [] },
    ];
    assert.deepEqual(renderRules(kinds).rules, [
      ...OPERATOR_CLUSTER_RULES,
      ...kinds.flatMap(targetKindRules),
    ]);
    const r = helmWithTargetKinds('lint', CHART, kinds);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  it("the documented values render the documented ClusterRole's rules", () => {
    const values = fromYaml(docBlock('docs/install.md', HEADING, 'yaml', 'targetKinds:')) as {
      targetKinds: TargetKind[];
    };
    const documented = fromYaml(argoRolloutsGrantYaml().split('---\n')[0] ?? '') as { rules: PolicyRule[] };
    assert.deepEqual(renderRules(values.targetKinds).rules, [...OPERATOR_CLUSTER_RULES, ...documented.rules]);
  });

  it('refuses a malformed entry, naming it and what to write', () => {
    const table: [unknown, RegExp][] = [
      [[{ resources: ['rollouts'] }], /targetKinds\[0\]\.apiGroup is required/],
      [
        [
          { apiGroup: 'argoproj.io', resources: ['rollouts'] },
          { apiGroup: 'Argo_Proj', resources: ['x'] },
        ],
        /targetKinds\[1\]\.apiGroup "Argo_Proj" is not an API group name/,
      ],
      [
        [{ apiGroup: 'argoproj.io', resources: ['rollouts/scale'] }],
        /targetKinds\[0\]\.resources: rollouts\/scale is not a plural resource name/,
      ],
      [
        [{ apiGroup: 'argoproj.io', resources: ['*'] }],
        /targetKinds\[0\]\.resources: \* is not a plural resource name/,
      ],
      [
        [{ apiGroup: 'argoproj.io', ownerResources: ['Rollouts'] }],
        /targetKinds\[0\]\.ownerResources: Rollouts is not a plural resource name/,
      ],
      [[{ apiGroup: 'argoproj.io', resources: 'rollouts' }], /targetKinds\[0\]\.resources must be a list/],
      [[{ apiGroup: 'argoproj.io' }], /targetKinds\[0\] names no resources and no ownerResources/],
      [
        [{ apiGroup: 'argoproj.io', resource: ['rollouts'] }],
        /targetKinds\[0\] has an unknown key "resource"/,
      ],
      [['rollouts'], /targetKinds\[0\] must be a map with apiGroup and resources/],
      [{ argo: 'rollouts' }, /targetKinds must be a list/],
    ];
    for (const [value, message] of table) {
      const r = renderRules(value);
      assert.equal(r.rules, undefined, `${JSON.stringify(value)} is refused`);
      assert.match(r.stderr, message, JSON.stringify(value));
    }
  });
});
