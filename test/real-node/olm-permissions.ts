// What OLM grants the operator, for the install test's permission comparison: the CSV's own
// install-strategy permissions (from the committed bundle), the additions OLM makes in
// AllNamespaces mode with the reason for each, and one flat string per granted permission so
// that the two sides compare as sets.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fromYaml } from '../../lib/yaml.ts';

/** A PolicyRule as RBAC objects and the CSV hold it. */
export interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}
/** A RoleBinding or ClusterRoleBinding, as far as the comparison reads it. */
export interface Binding {
  metadata: { name: string; namespace?: string };
  roleRef: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/**
 * What OLM grants beyond the CSV in AllNamespaces mode when it installs CSV `csv` into
 * namespace `ns`, each with its reason.
 */
export function olmAdditions(ns: string, csv: string): { scope: string; rule: Rule; reason: string }[] {
  return [
    {
      scope: 'cluster',
      rule: { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      reason: 'AllNamespaces: the operator may see the namespaces its OperatorGroup selects',
    },
    {
      scope: 'cluster',
      rule: { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      reason: 'system:auth-delegator, bound for the webhook Service so it can authenticate callers',
    },
    {
      scope: 'cluster',
      rule: { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      reason: 'system:auth-delegator, bound for the webhook Service so it can authorize callers',
    },
    {
      scope: 'ns:kube-system',
      rule: {
        apiGroups: [''],
        resources: ['configmaps'],
        resourceNames: ['extension-apiserver-authentication'],
        verbs: ['get', 'list', 'watch'],
      },
      reason: 'extension-apiserver-authentication-reader, bound for the webhook Service (the client CA)',
    },
    {
      scope: `ns:${ns}`,
      rule: {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['aiops-operator-service-cert'],
        verbs: ['get'],
      },
      reason: 'the serving certificate OLM issued for the webhook',
    },
    {
      scope: `ns:${ns}`,
      rule: {
        apiGroups: ['operators.coreos.com'],
        resources: ['operatorconditions'],
        resourceNames: [csv],
        verbs: ['get', 'update', 'patch'],
      },
      reason: "the CSV's OperatorCondition, where the operator reports Upgradeable",
    },
  ];
}

/** One string per (scope, group, resource, name, verb) a rule grants. */
export function flatten(scope: string, rules: readonly Rule[]): string[] {
  return rules.flatMap((r) =>
    (r.apiGroups ?? ['']).flatMap((g) =>
      (r.resources ?? []).flatMap((res) =>
        (r.resourceNames?.length ? r.resourceNames : ['*']).flatMap((n) =>
          r.verbs.map((v) => `${scope} ${g}/${res}/${n} ${v}`),
        ),
      ),
    ),
  );
}

export interface CsvInstall {
  permissions: { serviceAccountName: string; rules: Rule[] }[];
  clusterPermissions: { serviceAccountName: string; rules: Rule[] }[];
}
/** The install strategy's permissions of the committed CSV. */
export function csvInstall(): CsvInstall {
  const csv = fromYaml(
    readFileSync(
      fileURLToPath(
        new URL('../../bundle/manifests/aiops-operator.clusterserviceversion.yaml', import.meta.url),
      ),
      'utf8',
    ),
  ) as {
    spec: { install: { spec: CsvInstall } };
  };
  return csv.spec.install.spec;
}
/** The ServiceAccount the CSV's permissions are for. */
export function csvServiceAccount(): string {
  const name = csvInstall().clusterPermissions[0]?.serviceAccountName;
  if (name === undefined) throw new Error('the CSV has no clusterPermissions');
  return name;
}
