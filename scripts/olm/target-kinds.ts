// What an admin grants so AITasks may target a kind beyond Deployments and StatefulSets: the
// shipped role (api/rbac.ts) stays least privilege, and every install path adds a kind the same
// way. The operator reads and scales such a target only through its `/scale` subresource
// (`get`, `update`), and follows a pod's controller chain up to it by listing each intermediate
// controller kind by name (`list`; ReplicaSets are already granted). The Helm chart renders
// these rules from its `targetKinds` value (the template text below, checked by `helm
// template`); OLM and plain-manifest admins apply the ClusterRole and ClusterRoleBinding of
// `targetKindGrant`, which docs/install.md and the CSV's description show for Argo Rollouts.

import { DEFAULT_INSTALL } from '../../api/install.ts';
import type { PolicyRule } from '../../api/rbac.ts';
import { toYaml } from '../../lib/yaml.ts';

/** One entry of the chart's `targetKinds`: a group's resources that AITasks may target. */
export interface TargetKind {
  /** The API group of the resources (`""` for the core group), e.g. `argoproj.io`. */
  readonly apiGroup: string;
  /** Plural resource names serving `/scale` that AITasks may target, e.g. `rollouts`. */
  readonly resources: readonly string[];
  /** Plural resource names of intermediate controllers between such a target and its pods (default none). */
  readonly ownerResources?: readonly string[];
}

/** The rules that let the operator act on `kind`: `get`/`update` on each `R/scale`, `list` on each owner. */
export function targetKindRules(kind: TargetKind): PolicyRule[] {
  const owners = kind.ownerResources ?? [];
  return [
    ...(kind.resources.length > 0
      ? [
          {
            apiGroups: [kind.apiGroup],
            resources: kind.resources.map((r) => `${r}/scale`),
            verbs: ['get', 'update'],
          },
        ]
      : []),
    ...(owners.length > 0 ? [{ apiGroups: [kind.apiGroup], resources: [...owners], verbs: ['list'] }] : []),
  ];
}

/** Where the grant binds: the operator's ServiceAccount in its install namespace (default aiops-system). */
export interface GrantTarget {
  /** The ClusterRole's and ClusterRoleBinding's name. */
  readonly name: string;
  /** The operator's install namespace: aiops-system for plain manifests and Helm; OLM's is the Subscription's. */
  readonly namespace?: string;
}

/** The ClusterRole with `targetKindRules(kind)` and its ClusterRoleBinding to the operator's ServiceAccount. */
export function targetKindGrant(kind: TargetKind, at: GrantTarget): Record<string, unknown>[] {
  const rbac = 'rbac.authorization.k8s.io';
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: at.name },
      rules: targetKindRules(kind),
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: at.name },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: at.name },
      subjects: [
        {
          kind: 'ServiceAccount',
          name: DEFAULT_INSTALL.serviceAccount,
          namespace: at.namespace ?? DEFAULT_INSTALL.namespace,
        },
      ],
    },
  ];
}

/** The documented example: Argo Rollouts (Rollout → ReplicaSet → Pod; ReplicaSets are already listed). */
export const ARGO_ROLLOUTS: TargetKind = { apiGroup: 'argoproj.io', resources: ['rollouts'] };
/** The name of the documented example's ClusterRole and ClusterRoleBinding. */
export const ARGO_ROLLOUTS_GRANT = 'aiops-operator-argo-rollouts';

/** The documented example's grant as one YAML text of two documents. */
export function argoRolloutsGrantYaml(namespace?: string): string {
  return targetKindGrant(ARGO_ROLLOUTS, {
    name: ARGO_ROLLOUTS_GRANT,
    ...(namespace !== undefined ? { namespace } : {}),
  })
    .map((o) => toYaml(o))
    .join('---\n');
}

/** The comment of values.yaml's `targetKinds`, with a commented example entry. */
export const TARGET_KINDS_COMMENT = `Extra kinds AITasks may target, beyond Deployments and StatefulSets; each must serve /scale
(docs/install.md#targeting-other-kinds). An entry adds to the operator's ClusterRole get and update
on <resource>/scale for each of resources, and list on each of ownerResources: the intermediate
controllers between such a target and its pods, when not ReplicaSets (already granted).
  - apiGroup: argoproj.io
    resources: [rollouts]
    ownerResources: []`;

/** A DNS-1123 subdomain or empty (the core group); a lowercase plural resource name. */
const GROUP_RE = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$';
const RESOURCE_RE = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const KEYS = ['apiGroup', 'resources', 'ownerResources'];

/**
 * The chart's `aiops-operator.targetKindRules` template: `targetKinds` checked entry by entry
 * (a malformed one fails `helm template`/`install` naming the entry and what to write), then
 * the rules of `targetKindRules` for each, as YAML list items; nothing for an empty list.
 */
export const TARGET_KINDS_HELPER = `{{/* The ClusterRole rules of .Values.targetKinds (passed as .): get/update on <resource>/scale, list on ownerResources; each entry checked first. */}}
{{- define "aiops-operator.targetKindRules" -}}
{{- if not (kindIs "slice" (. | default list)) -}}
{{- fail "targetKinds must be a list of {apiGroup, resources, ownerResources} entries" -}}
{{- end -}}
{{- $rules := list -}}
{{- range $i, $k := . -}}
{{- $at := printf "targetKinds[%d]" $i -}}
{{- if not (kindIs "map" $k) -}}
{{- fail (printf "%s must be a map with apiGroup and resources, e.g. {apiGroup: argoproj.io, resources: [rollouts]}" $at) -}}
{{- end -}}
{{- range $key, $_ := $k -}}
{{- if not (has $key (list ${KEYS.map((k) => `"${k}"`).join(' ')})) -}}
{{- fail (printf "%s has an unknown key %q: the keys are ${KEYS.join(', ')}" $at $key) -}}
{{- end -}}
{{- end -}}
{{- if not (and (hasKey $k "apiGroup") (kindIs "string" $k.apiGroup)) -}}
{{- fail (printf "%s.apiGroup is required: the API group of its resources, e.g. argoproj.io (\\"\\" for the core group)" $at) -}}
{{- end -}}
{{- if not (regexMatch "${GROUP_RE}" $k.apiGroup) -}}
{{- fail (printf "%s.apiGroup %q is not an API group name (lowercase DNS subdomain, e.g. argoproj.io)" $at $k.apiGroup) -}}
{{- end -}}
{{- $lists := dict "resources" ($k.resources | default list) "ownerResources" ($k.ownerResources | default list) -}}
{{- range $field, $names := $lists -}}
{{- if not (kindIs "slice" $names) -}}
{{- fail (printf "%s.%s must be a list of plural resource names, e.g. [rollouts]" $at $field) -}}
{{- end -}}
{{- range $names -}}
{{- if not (and (kindIs "string" .) (regexMatch "${RESOURCE_RE}" (toString .))) -}}
{{- fail (printf "%s.%s: %v is not a plural resource name (lowercase, no \\"/\\" or \\"*\\", e.g. rollouts)" $at $field .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (empty $lists.resources) (empty $lists.ownerResources) -}}
{{- fail (printf "%s names no resources and no ownerResources: list the plural resources AITasks may target, e.g. resources: [rollouts]" $at) -}}
{{- end -}}
{{- with $lists.resources -}}
{{- $scale := list -}}
{{- range . }}{{ $scale = append $scale (printf "%s/scale" .) }}{{ end -}}
{{- $rules = append $rules (dict "apiGroups" (list $k.apiGroup) "resources" $scale "verbs" (list "get" "update")) -}}
{{- end -}}
{{- with $lists.ownerResources -}}
{{- $rules = append $rules (dict "apiGroups" (list $k.apiGroup) "resources" . "verbs" (list "list")) -}}
{{- end -}}
{{- end -}}
{{- with $rules }}{{ toYaml . }}{{ end -}}
{{- end }}
`;

/** The lines that end the operator ClusterRole's rules in the chart: the helper's rules, if any. */
export const TARGET_KINDS_RULE_LINES: readonly string[] = [
  '{{- with include "aiops-operator.targetKindRules" .Values.targetKinds }}',
  '{{- . | nindent %I+0% }}',
  '{{- end }}',
];
