// The releases the project declares for OLM: which version went to which channel, and
// where its images live. The bundle generator computes every upgrade edge (replaces,
// skipRange) from this list, so the catalog's graph is never written by hand.

/** OLM package name; the CSV is named `<PACKAGE_NAME>.v<version>`. */
export const PACKAGE_NAME = 'aiops-operator';

/** Channels of the package: `candidate` gets every release, `stable` the ones promoted. */
export const CHANNELS = ['stable', 'candidate'] as const;
export type Channel = (typeof CHANNELS)[number];
/** Channel a Subscription without `spec.channel` follows. */
export const DEFAULT_CHANNEL: Channel = 'stable';

/** Image repository of the operator; the tag is `v<version>`. */
export const OPERATOR_IMAGE_REPOSITORY = 'registry.example.com/aiops/aiops-operator';
/** Image repository of the bundle image built from bundle/; the tag is `v<version>`. */
export const BUNDLE_IMAGE_REPOSITORY = 'registry.example.com/aiops/aiops-operator-bundle';

/** One published (or about to be published) version. */
export interface Release {
  /** Semver of the release, without a leading `v`; equals package.json's version when current. */
  readonly version: string;
  /** Channels the release is published to; at least one. */
  readonly channels: readonly Channel[];
  /** Day the release was cut (`YYYY-MM-DD`), the CSV's `createdAt`. */
  readonly date: string;
  /** Earlier versions no upgrade may pass through (bad releases); they are skipped. */
  readonly skips?: readonly string[];
}

/**
 * Every release, oldest first. The newest entry must be package.json's version: a
 * version bump starts with a new entry here. Entries are never edited after release
 * (bundles are immutable); a bad release is fixed by a newer one that `skips` it.
 */
export const RELEASES: readonly Release[] = [
  { version: '0.2.0', channels: ['candidate', 'stable'], date: '2026-11-15' },
  { version: '1.0.0', channels: ['candidate', 'stable'], date: '2026-11-29' },
];

/** Image reference of the operator at `version`. */
export function operatorImage(version: string): string {
  return `${OPERATOR_IMAGE_REPOSITORY}:v${version}`;
}

/** Image reference of the bundle at `version`. */
export function bundleImage(version: string): string {
  return `${BUNDLE_IMAGE_REPOSITORY}:v${version}`;
}

/** CSV name of `version`, e.g. `aiops-operator.v1.0.0`. */
export function csvName(version: string): string {
  return `${PACKAGE_NAME}.v${version}`;
}
