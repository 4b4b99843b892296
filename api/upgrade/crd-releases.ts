// The CRD of every release, declared once: which versions each release lists, serves,
// deprecates and stores. `npm run check-upgrade` walks consecutive releases through the
// safety rules; the upgrade end-to-end tests install them in order on a live cluster, by
// hand (test/upgrade) and through OLM (test/real-node/olm-upgrade.cluster.test.ts).

import { buildCRD, type ConversionTarget, type CustomResourceDefinition, type VersionName } from '../crd.ts';
import type { Rule } from './safety.ts';

/** A safety finding a release makes on purpose, with the reason users are told. */
export interface AcceptedFinding {
  readonly rule: Rule;
  readonly version: VersionName;
  /** JSON path inside the version's schema, as the finding names it. */
  readonly path: string;
  readonly why: string;
}

export interface CRDRelease {
  /** Semver of the release. */
  readonly version: string;
  /** Versions the CRD lists. */
  readonly versions: readonly VersionName[];
  /** Versions served (default: all listed). */
  readonly served?: readonly VersionName[];
  readonly storage: VersionName;
  /** Versions marked deprecated. */
  readonly deprecated: readonly VersionName[];
  /**
   * True when upgrading to this release requires `kubectl aiops migrate-storage` to have
   * completed on the previous one (then only its storage version may be stored).
   */
  readonly requiresMigration?: boolean;
  /** Default of v1's `spec.namespace` in this release (only the seed had one). */
  readonly v1NamespaceDefault?: string;
  /** Findings of the upgrade into this release that are intended, each with its reason. */
  readonly accepted?: readonly AcceptedFinding[];
}

/** Every release's CRD, oldest first; the last is the current one (what api/crd.ts builds by default). */
export const CRD_RELEASES: readonly CRDRelease[] = [
  // The seed: v1 only, installed from plain manifests; an omitted namespace became "default".
  { version: '0.1.0', versions: ['v1'], storage: 'v1', deprecated: [], v1NamespaceDefault: 'default' },
  // The first OLM release: v2 is served (converted by the operator's webhook), v1 stays stored.
  {
    version: '0.2.0',
    versions: ['v1alpha1', 'v1', 'v2'],
    storage: 'v1',
    deprecated: [],
    accepted: [
      {
        rule: 'defaultChanged',
        version: 'v1',
        path: '.spec.namespace',
        why:
          'the seed defaulted an omitted namespace to "default", letting an AITask act on another ' +
          "namespace; now empty means the AITask's own. Objects that got the old default keep it, " +
          'and the operator refuses them with a condition that says so',
      },
    ],
  },
  // Storage moves to v2 (`kubectl aiops migrate-storage` rewrites old objects); v1alpha1 is deprecated.
  { version: '1.0.0', versions: ['v1alpha1', 'v1', 'v2'], storage: 'v2', deprecated: ['v1alpha1'] },
];

/** The CRD of `release`; `conversion` is required when it serves more than one version. */
export function crdOfRelease(release: CRDRelease, conversion?: ConversionTarget): CustomResourceDefinition {
  return buildCRD({
    versions: release.versions,
    served: release.served ?? release.versions,
    storage: release.storage,
    deprecated: release.deprecated,
    ...(release.v1NamespaceDefault !== undefined ? { v1NamespaceDefault: release.v1NamespaceDefault } : {}),
    ...((release.served ?? release.versions).length > 1 && conversion ? { conversion } : {}),
  });
}

/**
 * Versions objects may be stored at when `releases[index]` is installed: every storage
 * version since the last release that required a completed migration (inclusive).
 */
export function maybeStoredAt(releases: readonly CRDRelease[], index: number): VersionName[] {
  const out: VersionName[] = [];
  for (let i = index; i >= 0; i--) {
    const r = releases[i];
    if (r === undefined) break;
    if (!out.includes(r.storage)) out.unshift(r.storage);
    if (r.requiresMigration) break;
  }
  return out;
}

/** The entry by which `release` declares `finding` (rule, version and path) intended, if any. */
export function acceptanceOf(
  release: CRDRelease,
  finding: { rule: Rule; version: string; path: string },
): AcceptedFinding | undefined {
  return (release.accepted ?? []).find(
    (a) => a.rule === finding.rule && a.version === finding.version && a.path === finding.path,
  );
}
