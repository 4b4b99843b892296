// The CRD of every release, declared once: which versions each release lists, serves,
// deprecates and stores. `npm run check-upgrade` walks consecutive releases through the
// safety rules; the upgrade end-to-end test installs them in order on a live cluster.

import { buildCRD, type ConversionTarget, type CustomResourceDefinition, type VersionName } from '../crd.ts';

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
}

/** Every release's CRD, oldest first; the last is the current one (what api/crd.ts builds by default). */
export const CRD_RELEASES: readonly CRDRelease[] = [
  { version: '0.1.0', versions: ['v1alpha1'], storage: 'v1alpha1', deprecated: [] },
  { version: '0.2.0', versions: ['v1alpha1', 'v1'], storage: 'v1', deprecated: [] },
  { version: '1.0.0', versions: ['v1alpha1', 'v1', 'v2'], storage: 'v2', deprecated: ['v1alpha1'] },
];

/** The CRD of `release`; `conversion` is required when it serves more than one version. */
export function crdOfRelease(release: CRDRelease, conversion?: ConversionTarget): CustomResourceDefinition {
  return buildCRD({
    versions: release.versions,
    served: release.served ?? release.versions,
    storage: release.storage,
    deprecated: release.deprecated,
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
