// The file-based catalog (FBC) of the package: the olm.package blob, one olm.channel blob
// per channel with the edges computed in graph.ts (in FBC the catalog, not the CSV, is the
// source of truth for upgrades), and the olm.bundle blob of the current release rendered
// from its CSV and CRD the way `opm render` does for a bundle image.

import { KIND, GROUP } from '../../api/schema/common.ts';
import type { CustomResourceDefinition } from '../../api/crd.ts';
import {
  bundleImage,
  CHANNELS,
  csvName,
  DEFAULT_CHANNEL,
  PACKAGE_NAME,
  type Release,
} from '../../api/releases.ts';
import type { ClusterServiceVersion } from './csv.ts';
import { channelEntries } from './graph.ts';
import { ICON } from './icon.ts';

/** The olm.package blob. */
export function packageBlob(): Record<string, unknown> {
  return {
    schema: 'olm.package',
    name: PACKAGE_NAME,
    defaultChannel: DEFAULT_CHANNEL,
    description: 'Self-healing Kubernetes operator: AITasks watch a metric and remediate Deployments safely.',
    icon: ICON,
  };
}

/** One olm.channel blob per channel that has releases, in CHANNELS order. */
export function channelBlobs(releases: readonly Release[]): Record<string, unknown>[] {
  return CHANNELS.map((channel) => ({
    schema: 'olm.channel',
    package: PACKAGE_NAME,
    name: channel,
    entries: channelEntries(releases, channel, csvName),
  })).filter((blob) => blob.entries.length > 0);
}

/**
 * The `olm.csv.metadata` property: the part of the CSV OLM's package server shows for a
 * channel head, with the field names `opm` gives them.
 */
function csvMetadata(csv: ClusterServiceVersion): Record<string, unknown> {
  const from: Record<string, string> = {
    apiServiceDefinitions: 'apiservicedefinitions',
    crdDescriptions: 'customresourcedefinitions',
    description: 'description',
    displayName: 'displayName',
    installModes: 'installModes',
    keywords: 'keywords',
    links: 'links',
    maintainers: 'maintainers',
    maturity: 'maturity',
    minKubeVersion: 'minKubeVersion',
    nativeAPIs: 'nativeAPIs',
    provider: 'provider',
  };
  const metadata: Record<string, unknown> = {
    annotations: csv.metadata.annotations,
    apiServiceDefinitions: {},
    labels: csv.metadata.labels,
  };
  for (const [to, field] of Object.entries(from)) {
    const value = csv.spec[field];
    if (value !== undefined) metadata[to] = value;
  }
  return Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The olm.bundle blob of `release`: its image, the olm.package, olm.gvk and
 * olm.csv.metadata properties, and the images it needs.
 */
export function bundleBlob(
  release: Release,
  csv: ClusterServiceVersion,
  crd: CustomResourceDefinition,
): Record<string, unknown> {
  if (csv.spec.version !== release.version) throw new Error('CSV and release versions differ');
  const gvks = crd.spec.versions
    .map((v) => v.name)
    .sort()
    .map((version) => ({ type: 'olm.gvk', value: { group: GROUP, kind: KIND, version } }));
  return {
    schema: 'olm.bundle',
    name: csvName(release.version),
    package: PACKAGE_NAME,
    image: bundleImage(release.version),
    properties: [
      ...gvks,
      { type: 'olm.package', value: { packageName: PACKAGE_NAME, version: release.version } },
      { type: 'olm.csv.metadata', value: csvMetadata(csv) },
    ],
    relatedImages: csv.spec.relatedImages,
  };
}

/**
 * The olm.bundle blob of the current release with its manifests inline (olm.bundle.object
 * properties, as `opm render <bundle dir>` writes them) and no bundle image: a catalog of
 * these installs without OLM unpacking an image, which needs a registry and a container
 * runtime for its unpack Job. What it installs is byte for byte what bundle/manifests holds.
 */
export function inlineBundleBlob(
  release: Release,
  csv: ClusterServiceVersion,
  crd: CustomResourceDefinition,
  others: readonly unknown[] = [],
): Record<string, unknown> {
  const blob = bundleBlob(release, csv, crd);
  const object = (o: unknown) => ({
    type: 'olm.bundle.object',
    value: { data: Buffer.from(JSON.stringify(o)).toString('base64') },
  });
  const properties = (blob['properties'] as { type: string }[]).filter((p) => p.type !== 'olm.csv.metadata');
  return { ...blob, image: '', properties: [...properties, ...others.map(object), object(csv), object(crd)] };
}
