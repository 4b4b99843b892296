// `npm run image`: builds the operator image from the project's Dockerfile with buildah (no
// Docker engine, no registry), tagged exactly as deploy/ and the CSV name it
// (registry.example.com/aiops/aiops-operator:v<version>), on a locally made Node 24 base
// (localhost/aiops/node-base:24, passed as the Dockerfile's BASE; it shadows no real image),
// with the OCI labels version and revision filled in.
// When the persistent cluster runs a real node (`npm run cluster -- up --real-node`), the
// image is loaded into that node's containerd. A rebuild is skipped when no file of the
// build context changed (label aiops.source-key).
// `--release` builds the image that is published instead: on the base image-base.txt pins by
// digest (scripts/lib/image-base.ts; pulled when not in local storage), refusing to start
// when that base has no digest, labelled with the base's digest; always rebuilt.
//
// Usage: npm run image [-- --force] [-- --release]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operatorImage } from '../api/releases.ts';
import { readBaseImageFile } from './lib/image-base.ts';
import {
  buildDockerfile,
  contentKey,
  ensureNodeBase,
  imageLabel,
  loadIntoContainerd,
  NODE_BASE_IMAGE,
} from './lib/images.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const say = (msg: string): void => void process.stderr.write(`[image] ${msg}\n`);

/** The operator image of package.json's version. */
export function currentOperatorImage(): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return operatorImage(pkg.version);
}

/** Files of the build context: tracked and untracked, minus what .dockerignore leaves out. */
function contextFiles(): string[] {
  const ignored = ['.git/', '.ci/', 'node_modules/', 'dist/', 'bundle/', 'deploy/', 'config/', 'test/'];
  return execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(
      (f) =>
        f !== '' &&
        !ignored.some((d) => f.startsWith(d)) &&
        !f.endsWith('.test.ts') &&
        !/^[^/]*\.md$/.test(f),
    )
    .filter((f) => existsSync(join(root, f)))
    .map((f) => join(root, f));
}

/**
 * Builds the operator image unless an image with the same source key exists (`force`
 * rebuilds). Returns the image reference. Throws with buildah's last lines on failure.
 */
export function buildOperatorImage(
  opts: {
    readonly force?: boolean;
    readonly log?: (m: string) => void;
    /** Build the published image, on the base pinned by digest in image-base.txt (throws when it has none). */
    readonly release?: boolean;
  } = {},
): string {
  const log = opts.log ?? say;
  const image = currentOperatorImage();
  const release = opts.release === true ? readBaseImageFile(root) : undefined;
  const key = contentKey(root, contextFiles());
  if (release === undefined && !opts.force && imageLabel(image, 'aiops.source-key') === key) {
    log(`${image} is up to date (source key ${key})`);
    return image;
  }
  if (release === undefined) {
    log(`making the base image ${NODE_BASE_IMAGE} from Node ${process.version}`);
    ensureNodeBase();
  }
  const base = release?.reference ?? NODE_BASE_IMAGE;
  log(`building ${image} on ${base} from the Dockerfile with buildah`);
  const t0 = Date.now();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const revision = (() => {
    try {
      return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  buildDockerfile(
    image,
    root,
    join(root, 'Dockerfile'),
    {
      'aiops.source-key': release === undefined ? key : `${key} release`,
      ...(release === undefined ? {} : { 'org.opencontainers.image.base.digest': release.digest }),
    },
    { BASE: base, VERSION: pkg.version, REVISION: revision },
    release === undefined ? 'never' : 'missing',
  );
  log(`built ${image} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return image;
}

if (import.meta.main) {
  try {
    const args = process.argv.slice(2);
    if (args.some((a) => a !== '--force' && a !== '--release')) {
      process.stderr.write('usage: npm run image [-- --force] [-- --release]\n');
      process.exit(2);
    }
    const image = buildOperatorImage({
      force: args.includes('--force'),
      release: args.includes('--release'),
    });
    const { runningRealNodeSocket } = await import('../test/harness/real-node/running.ts');
    const socket = await runningRealNodeSocket();
    if (socket) {
      loadIntoContainerd(socket, [image]);
      say(`loaded ${image} into the real node's containerd`);
    } else say("no real node runs (npm run cluster -- up --real-node); the image stays in buildah's storage");
  } catch (err) {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
