// `npm run bundle`: writes the OLM bundle, the file-based catalog and the plain install
// manifests of the version in package.json (see scripts/olm/render.ts). The bundle's
// manifests directory is rewritten whole; earlier releases' catalog entries are kept as
// committed, and each declared release must have one.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELEASES } from '../api/releases.ts';
import { bundleBlobPath, PATHS, renderRelease } from './olm/render.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Writes the generated files of the package.json version; throws on a bad version or a missing release entry. */
export function writeBundle(): void {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error('package.json has no version');
  const files = renderRelease(pkg.version, RELEASES);
  for (const release of RELEASES.slice(0, -1)) {
    for (const path of [
      bundleBlobPath(release.version),
      bundleBlobPath(release.version, PATHS.inlineCatalog),
    ])
      if (!existsSync(join(root, path))) {
        throw new Error(
          `${path} is missing: the catalog entry of released ${release.version} must stay committed`,
        );
      }
  }
  rmSync(join(root, PATHS.manifests), { recursive: true, force: true });
  for (const [rel, content] of files) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    process.stdout.write(`wrote ${rel}\n`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeBundle();
