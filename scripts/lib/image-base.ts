// The base image of a release build, pinned by digest in image-base.txt at the repository's
// top: a tag (node:24-slim) names whatever was pushed under it last, so two release builds of
// one commit could ship different Node binaries and libraries; a digest names one image. The
// file is read here, and a release build refuses a base without a digest, saying how to pin
// it. Development builds (`npm run image`) use the locally made base (images.ts) and never
// read it. Pure apart from readBaseImageFile.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file, relative to the repository's top, that records the release base. */
export const BASE_IMAGE_FILE = 'image-base.txt';

/**
 * An image reference pinned by digest: a name (registry host and port optional, lower-case
 * path components), an optional tag, then `@sha256:` and 64 lower-case hex digits.
 */
const PINNED =
  /^(?<name>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\.[a-z0-9-]+)*(?::\d+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::[\w][\w.-]{0,127})?@(?<digest>sha256:[0-9a-f]{64})$/;

/** The reference a file's text records: its one line that is neither blank nor a `#` comment. */
export function recordedBase(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length !== 1)
    throw new Error(`${BASE_IMAGE_FILE} must hold one image reference, it holds ${lines.length}`);
  return lines[0] ?? '';
}

/** A release base: the reference as recorded, and its digest. */
export interface ReleaseBase {
  readonly reference: string;
  readonly digest: string;
}

/**
 * `reference` as the base of a release build; throws, saying how to pin it, when it is not
 * pinned by a sha256 digest.
 */
export function releaseBase(reference: string): ReleaseBase {
  const digest = PINNED.exec(reference)?.groups?.['digest'];
  if (digest === undefined)
    throw new Error(
      `a release build needs its base pinned by digest (name:tag@sha256:<64 hex digits>); ${BASE_IMAGE_FILE} records ${JSON.stringify(reference)}. Pin it as docs/install.md says ("Pin the image's base").`,
    );
  return { reference, digest };
}

/** The release base recorded in `root`'s BASE_IMAGE_FILE; throws when it is not pinned by digest. */
export function readBaseImageFile(root: string): ReleaseBase {
  return releaseBase(recordedBase(readFileSync(join(root, BASE_IMAGE_FILE), 'utf8')));
}
