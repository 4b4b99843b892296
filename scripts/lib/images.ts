// Container images built on this machine without Docker or a registry: buildah builds them
// into its local storage, `ctr images import` loads them into a containerd. Used by
// `npm run image` (the operator image from the project's Dockerfile) and by the real-node
// harness (its pause and demo images).
//
// The Dockerfile's base is made here too (no pulls), under a name of its own
// (NODE_BASE_IMAGE, passed as the Dockerfile's BASE, so it never stands in for the real
// node:24-slim): the Node binary of the npm `node` package with the host's glibc libraries,
// busybox for /bin/sh, npm and the CA certificates — enough to run the Dockerfile's build
// stage and the runtime it ships.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { run } from './run.ts';

/** Local name of the Dockerfile's base image. */
export const NODE_BASE_IMAGE = 'localhost/aiops/node-base:24';

/** True if buildah's local storage has `image`. */
export function imageExists(image: string): boolean {
  try {
    execFileSync('buildah', ['inspect', '--type', 'image', image], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Value of label `key` of a local image, or undefined. */
export function imageLabel(image: string, key: string): string | undefined {
  if (!imageExists(image)) return undefined;
  const out = run('buildah', [
    'inspect',
    '--type',
    'image',
    '--format',
    `{{index .OCIv1.Config.Labels "${key}"}}`,
    image,
  ]).trim();
  return out === '' || out === '<no value>' ? undefined : out;
}

/**
 * Builds an image from scratch: `fill(rootfs)` writes files into a temporary root, which is
 * copied in; then `config` flags (buildah config syntax) and the labels are applied.
 */
export function buildFromScratch(
  image: string,
  fill: (rootfs: string) => void,
  config: readonly string[],
  labels: Readonly<Record<string, string>> = {},
): void {
  const rootfs = mkdtempSync(join(tmpdir(), 'aiops-rootfs-'));
  const ctr = run('buildah', ['from', 'scratch']).trim();
  try {
    fill(rootfs);
    run('buildah', ['copy', ctr, `${rootfs}/`, '/']);
    const labelArgs = Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
    run('buildah', ['config', ...config, ...labelArgs, ctr]);
    run('buildah', ['commit', '--rm', ctr, image]);
  } catch (err) {
    execFileSync('buildah', ['rm', ctr], { stdio: 'ignore' });
    throw err;
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

/** Copies `src` to `<rootfs><dest>`, creating parent dirs; symlinks are resolved. */
export function put(rootfs: string, src: string, dest: string, mode?: number): void {
  const to = join(rootfs, dest);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(realpathSync(src), to);
  if (mode !== undefined) execFileSync('chmod', [mode.toString(8), to]);
}

/** Shared libraries (absolute paths) `binary` loads, from ldd. */
function sharedLibraries(binary: string): string[] {
  return run('ldd', [binary])
    .split('\n')
    .map((l) => /(\/\S+) \(0x/.exec(l)?.[1])
    .filter((p): p is string => p !== undefined);
}

const BUSYBOX_APPLETS = [
  'sh',
  'rm',
  'mkdir',
  'cp',
  'mv',
  'ls',
  'cat',
  'chmod',
  'ln',
  'test',
  'true',
  'tar',
  'gzip',
];

/**
 * Makes NODE_BASE_IMAGE from `nodeBinary` (default: the `node` package's): Node at
 * /usr/local/bin/node, its libraries, npm, busybox as /bin/sh, users root and node (1000).
 * Skipped when the image exists and was made from the same Node binary.
 */
export function ensureNodeBase(nodeBinary = realpathSync(process.execPath)): void {
  const stamp = process.version;
  if (imageLabel(NODE_BASE_IMAGE, 'aiops.node-version') === stamp) return;
  const npmDir = dirname(dirname(realpathSync(run('sh', ['-c', 'command -v npm']).trim())));
  buildFromScratch(
    NODE_BASE_IMAGE,
    (r) => {
      put(r, nodeBinary, '/usr/local/bin/node', 0o755);
      for (const lib of sharedLibraries(nodeBinary)) put(r, lib, lib);
      put(r, '/bin/busybox', '/bin/busybox', 0o755);
      for (const a of BUSYBOX_APPLETS) symlinkSync('busybox', join(r, 'bin', a));
      mkdirSync(join(r, 'usr/bin'), { recursive: true });
      symlinkSync('/bin/busybox', join(r, 'usr/bin/env'));
      mkdirSync(join(r, 'usr/local/lib/node_modules'), { recursive: true });
      run('cp', ['-a', npmDir, join(r, 'usr/local/lib/node_modules/npm')]);
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(r, 'usr/local/bin/npm'));
      put(r, '/etc/ssl/certs/ca-certificates.crt', '/etc/ssl/certs/ca-certificates.crt');
      writeFileSync(
        join(r, 'etc/passwd'),
        'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n',
      );
      writeFileSync(join(r, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
      for (const d of ['tmp', 'root', 'home/node']) mkdirSync(join(r, d), { recursive: true });
      execFileSync('chmod', ['1777', join(r, 'tmp')]);
      execFileSync('chown', ['1000:1000', join(r, 'home/node')]);
    },
    ['--env', 'PATH=/usr/local/bin:/usr/bin:/bin', '--cmd', 'node'],
    { 'aiops.node-version': stamp },
  );
}

/**
 * Builds `image` from `dockerfile` in `contextDir` with buildah (host network for the build
 * stage's npm, with the host's npm cache mounted so `npm ci` is served from it). `labels` are
 * added to the result. `pull`: `never` (default), the base must be local; `missing`, a base
 * not in local storage is pulled (a release base, by its digest).
 */
export function buildDockerfile(
  image: string,
  contextDir: string,
  dockerfile: string,
  labels: Readonly<Record<string, string>> = {},
  buildArgs: Readonly<Record<string, string>> = {},
  pull: 'never' | 'missing' = 'never',
): void {
  const labelArgs = Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
  const argArgs = Object.entries(buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]);
  const npmCache = join(homedir(), '.npm');
  mkdirSync(npmCache, { recursive: true });
  const npm = mkdtempSync(join(tmpdir(), 'aiops-npmrc-'));
  try {
    run('buildah', [
      'bud',
      `--pull=${pull}`,
      '--network=host',
      '--layers=false',
      '-v',
      `${npmCache}:/root/.npm`,
      ...hostNpmMounts(npm),
      ...labelArgs,
      ...argArgs,
      '-f',
      dockerfile,
      '-t',
      image,
      contextDir,
    ]);
  } finally {
    rmSync(npm, { recursive: true, force: true });
  }
}

/**
 * Mounts that give the build's npm the host npm's registry and CA file (npm's `cafile`, else
 * NODE_EXTRA_CA_CERTS), so `npm ci` in the
 * Dockerfile reaches the same registry through the same TLS proxy as the host's npm does.
 * Only for the build's RUN steps: mounts are not part of the image. `dir` holds the npmrc.
 */
function hostNpmMounts(dir: string): string[] {
  const setting = (key: string): string => {
    const value = run('npm', ['config', 'get', key]).trim();
    return value === 'null' || value === 'undefined' ? '' : value;
  };
  const registry = setting('registry');
  const cafile = [setting('cafile'), process.env['NODE_EXTRA_CA_CERTS'] ?? ''].find(
    (f) => f !== '' && existsSync(f),
  );
  const lines = registry === '' ? [] : [`registry=${registry}`];
  const mounts: string[] = [];
  if (cafile !== undefined) {
    lines.push('cafile=/run/aiops-npm-ca.crt');
    mounts.push('-v', `${cafile}:/run/aiops-npm-ca.crt:ro`);
  }
  writeFileSync(join(dir, 'npmrc'), `${lines.join('\n')}\n`);
  return [...mounts, '-v', `${join(dir, 'npmrc')}:/root/.npmrc:ro`];
}

/** Gives the local image `source` the additional name `target` (buildah tag). */
export function tagImage(source: string, target: string): void {
  run('buildah', ['tag', source, target]);
}

/** Loads local `images` into the containerd at `socket`, namespace k8s.io (what the kubelet uses). */
export function loadIntoContainerd(socket: string, images: readonly string[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-images-'));
  try {
    for (const image of images) {
      const archive = join(dir, 'image.tar');
      run('buildah', ['push', '--quiet', image, `docker-archive:${archive}:${image}`]);
      run('ctr', ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', '--no-unpack', archive]);
      rmSync(archive);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * sha256 (hex, first 16 chars) over the names (relative to `base`, so every checkout of the
 * same sources has the same key) and contents of `files`, for build-skip labels.
 */
export function contentKey(base: string, files: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort())
    h.update(`${relative(base, f)}\0`)
      .update(readFileSync(f))
      .update('\0');
  return h.digest('hex').slice(0, 16);
}
