// Runs the built plugin the way users do: `kubectl aiops ...` through the real kubectl
// binary and its plugin discovery, with dist/ reached through a PATH entry of symlinks and
// without the project's Node on PATH (the launcher must find a suitable Node itself).
// Used by the plugin's integration tests and its benchmark.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Result of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

const STAMP = join(root, 'dist', '.built-for');
const LOCK = join(
  tmpdir(),
  `aiops-dist-build-${createHash('sha256').update(root).digest('hex').slice(0, 12)}.lock`,
);

/** Sleeps synchronously (the build lock is taken in synchronous code). */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds the plugin with `npm run release` once per test run: test files of one `npm test`
 * (AIOPS_TEST_RUN, set by scripts/test.ts for both of its node:test processes), or else of one
 * `node --test` (same parent pid), share one build, serialised by a lock directory (stale
 * after 5 minutes). A second build during the run would replace dist/ under running tests.
 */
function buildOnce(): void {
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const lock = statSync(LOCK, { throwIfNoEntry: false });
      if (lock && Date.now() - lock.mtimeMs > 300_000) rmSync(LOCK, { recursive: true, force: true });
      sleep(200);
    }
  }
  try {
    const owner = process.env['AIOPS_TEST_RUN'] ?? String(process.ppid);
    if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === owner) return;
    execFileSync(process.execPath, [join(root, 'scripts/build.ts'), '--release'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    writeFileSync(STAMP, owner);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Builds the plugin (once per test run) and returns a PATH with kubectl-aiops on it: a temp
 * dir of links into dist/, removed when this process exits.
 */
export function buildAndInstall(): string {
  buildOnce();
  const bin = mkdtempSync(join(tmpdir(), 'aiops-plugin-path-'));
  process.once('exit', () => rmSync(bin, { recursive: true, force: true }));
  for (const exe of ['kubectl-aiops', 'kubectl_complete-aiops'])
    symlinkSync(join(root, 'dist', exe), join(bin, exe));
  return userPath(bin);
}

/** The krew release `npm run build` writes into dist/: manifest and archives. */
export interface KrewRelease {
  readonly version: string;
  readonly manifest: string;
  /** The launcher + bundle archive (darwin and the linux arches without an executable). */
  readonly launcherArchive: string;
  /** The single-executable archive of each linux arch, by krew's arch name. */
  readonly executableArchives: Readonly<Record<'amd64' | 'arm64', string>>;
}

/** Builds the plugin (once per test run) and returns its krew release in dist/. */
export function buildKrewRelease(): KrewRelease {
  buildOnce();
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const archive = (suffix: string): string => join(root, 'dist', `kubectl-aiops-v${version}${suffix}.tar.gz`);
  return {
    version,
    manifest: join(root, 'dist', 'krew', 'aiops.yaml'),
    launcherArchive: archive(''),
    executableArchives: { amd64: archive('-linux-amd64'), arm64: archive('-linux-arm64') },
  };
}

/** The single executable `npm run build` made for this machine's arch (linux x64 or arm64). */
export function singleExecutable(): string {
  buildOnce();
  return join(root, 'dist', 'sea', `linux-${process.arch === 'arm64' ? 'arm64' : 'amd64'}`, 'kubectl-aiops');
}

/** This process's PATH with `first` in front and without the project's own Node on it. */
export function userPath(...first: string[]): string {
  const rest = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((p) => !p.startsWith(join(root, 'node_modules')) && p !== dirname(process.execPath));
  return [...first, ...rest].join(delimiter);
}

/** Runs `kubectl <args>` with `env` added to a clean environment (no KUBECONFIG unless given). */
export function kubectl(
  path: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<KubectlResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k !== 'KUBECONFIG' && k !== 'NO_COLOR' && !k.startsWith('NODE_'),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      [...args],
      { env: { ...base, PATH: path, ...env }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
