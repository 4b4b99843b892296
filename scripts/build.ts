// `npm run build`: bundles the entry points with esbuild into dist/ and writes the
// executables users run: `dist/kubectl-aiops` (found by kubectl's plugin discovery) and
// `dist/kubectl_complete-aiops` (its shell completion), small POSIX sh launchers that pick a
// Node.js >= 22 (the package's own `node` dependency first, since the system one may be
// older). `npm run release` (--release) also builds `kubectl-aiops` as a Node single
// executable application for linux amd64 and arm64 (dist/sea/, no Node needed where it runs,
// V8 code cache embedded for the build machine's arch), packs each platform's krew archive
// (those executables; the launcher and bundle elsewhere) and writes the krew manifest with
// every archive's uri and sha256. The operator image needs none of that: it runs plain build.

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { load } from 'js-yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** One bundle: `source` (must exist) → `dist/<out>`. `split` bundles lazy imports as chunks. */
interface Entry {
  readonly source: string;
  readonly out: string;
  readonly what: string;
  readonly split?: boolean;
  /** Apply trimClientNode (only where nothing but KubeConfig is used from client-node). */
  readonly trim?: boolean;
}

/** Every entry point, explicitly: a missing source file fails the build. */
const ENTRIES: readonly Entry[] = [
  { source: 'plugin/main.ts', out: 'plugin/main.mjs', what: 'the kubectl plugin', split: true, trim: true },
  {
    source: 'cmd/operator.ts',
    out: 'operator.mjs',
    what: 'the operator process (operator + hosted webhook)',
  },
  { source: 'conversion-webhook/main.ts', out: 'webhook.mjs', what: 'the conversion webhook' },
];

/** Node.js major version the bundles need (commander 15 requires Node >= 22.12). */
const MIN_NODE_MAJOR = 22;

/** CommonJS dependencies inside an ESM bundle still call require(): give them one. */
const banner = {
  js: "import { createRequire as __aiopsCreateRequire } from 'node:module'; const require = __aiopsCreateRequire(import.meta.url);",
};

/**
 * Packages @kubernetes/client-node imports only for proxies and cloud auth providers, never
 * on our request path: each is bundled on its own as `dist/plugin/vendor/<name>.cjs` and
 * loaded on first use, so the plugin does not parse them at every start. Values: the named
 * exports client-node uses.
 */
const LAZY_VENDOR: Readonly<Record<string, readonly string[]>> = {
  undici: ['Agent', 'ProxyAgent', 'fetch'],
  socks: ['SocksClient'],
  'socks-proxy-agent': ['SocksProxyAgent'],
  hpagent: ['HttpProxyAgent', 'HttpsProxyAgent'],
  'jsonpath-plus': ['JSONPath'],
};

/**
 * A module whose exports forward construct, call and property reads to the vendor bundle on
 * disk, or (`inline`, for the single executable, which has no files beside it) to the package
 * bundled in, which esbuild then initialises on that first use only.
 */
function lazyModule(pkg: string, inline: boolean): string {
  const names = LAZY_VENDOR[pkg] ?? [];
  return [
    'import { createRequire } from "node:module";',
    'let mod;',
    inline
      ? `const load = () => (mod ??= require(${JSON.stringify(pkg)}));`
      : `const load = () => (mod ??= createRequire(import.meta.url)("../vendor/${pkg}.cjs"));`,
    'const lazy = (name) => new Proxy(function () {}, {',
    '  construct: (_t, args) => Reflect.construct(load()[name], args),',
    '  apply: (_t, self, args) => Reflect.apply(load()[name], self, args),',
    '  get: (_t, key) => load()[name][key],',
    '});',
    ...names.map((n) => `export const ${n} = lazy(${JSON.stringify(n)});`),
  ].join('\n');
}

/**
 * Startup trimming for @kubernetes/client-node, of which only KubeConfig is used: its modules
 * are marked side-effect free so unused API classes are dropped, and LAZY_VENDOR packages
 * are loaded on first use (from the bundle itself when `inline`).
 */
const trimClientNode = (inline = false): Plugin => ({
  name: 'trim-client-node',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'trimmed' || !args.importer.includes('/@kubernetes/client-node/'))
        return undefined;
      if (LAZY_VENDOR[args.path] !== undefined) return { path: args.path, namespace: 'aiops-lazy' };
      const r = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: 'trimmed',
      });
      return r.path.includes('/@kubernetes/client-node/') ? { ...r, sideEffects: false } : r;
    });
    b.onLoad({ filter: /.*/, namespace: 'aiops-lazy' }, (args) => ({
      resolveDir: root,
      contents: lazyModule(args.path, inline),
    }));
  },
});

/** Bundles each LAZY_VENDOR package as CommonJS into dist/plugin/vendor/. */
async function bundleVendor(): Promise<void> {
  for (const pkg of Object.keys(LAZY_VENDOR)) {
    await build({
      ...common,
      banner: {},
      format: 'cjs',
      stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root },
      outfile: join(dist, 'plugin/vendor', `${pkg}.cjs`),
    });
  }
}

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${MIN_NODE_MAJOR}`,
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  banner,
  logLevel: 'warning',
};

/** A POSIX sh launcher for `dist/plugin/main.mjs`, with `prefixArgs` before the user's arguments. */
function launcher(name: string, prefixArgs: string): string {
  return `#!/bin/sh
# ${name}: runs the bundled \`kubectl aiops\` with Node.js >= ${MIN_NODE_MAJOR}. Generated by scripts/build.ts.
# Node is looked up in this order: $AIOPS_NODE, the package's own node dependency, \`node\` on PATH.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) self=\${self%/*}/$link ;; esac
done
case $self in */*) dir=\${self%/*} ;; *) dir=. ;; esac
main="$dir/plugin/main.mjs"
for candidate in "\${AIOPS_NODE:-}" "$dir/../node_modules/node/bin/node" "$dir/../../node/bin/node"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then exec "$candidate" "$main" ${prefixArgs}"$@"; fi
done
if command -v node >/dev/null 2>&1; then
  version=$(node --version 2>/dev/null)
  major=\${version#v}
  major=\${major%%.*}
  case $major in
    '' | *[!0-9]*) ;;
    *) if [ "$major" -ge ${MIN_NODE_MAJOR} ]; then exec node "$main" ${prefixArgs}"$@"; fi ;;
  esac
  echo "${name}: needs Node.js >= ${MIN_NODE_MAJOR}, but \\\`node\\\` on PATH is \${version:-unknown}; install a newer Node.js or set AIOPS_NODE to one" >&2
else
  echo "${name}: needs Node.js >= ${MIN_NODE_MAJOR}: install it, or set AIOPS_NODE to its path" >&2
fi
exit 1
`;
}

function writeExecutable(path: string, content: string): void {
  writeFileSync(path, content);
  chmodSync(path, 0o755);
}

/** Base URL of release downloads in the krew manifest (override with AIOPS_RELEASE_BASE_URL). */
const RELEASE_BASE_URL = process.env['AIOPS_RELEASE_BASE_URL'] ?? 'https://aiops.example.com/releases';

/** One krew archive: its placeholder key in the template (`{{URI_<key>}}`), file name and sha256. */
interface Archive {
  readonly key: string;
  readonly file: string;
  readonly sha256: string;
}

/** Packs `files` of `dir` as `dist/<file>` and returns its sha256. */
function pack(file: string, dir: string, files: readonly string[]): string {
  execFileSync('tar', ['-czf', join(dist, file), ...files], { cwd: dir });
  return createHash('sha256')
    .update(readFileSync(join(dist, file)))
    .digest('hex');
}

/** The launcher + bundle archive (darwin, and every platform without a single executable). */
function packLauncher(version: string): Archive {
  const file = `kubectl-aiops-v${version}.tar.gz`;
  copyFileSync(join(root, 'LICENSE'), join(dist, 'LICENSE'));
  const sha256 = pack(file, dist, ['kubectl-aiops', 'kubectl_complete-aiops', 'plugin', 'LICENSE']);
  return { key: 'LAUNCHER', file, sha256 };
}

/** Writes dist/krew/aiops.yaml from the template with every archive's uri and sha256. */
function writeKrewManifest(version: string, archives: readonly Archive[]): void {
  const uri = (a: Archive): string => `${RELEASE_BASE_URL}/v${version}/${a.file}`;
  let manifest = readFileSync(join(root, 'plugin/krew/aiops.yaml'), 'utf8').replaceAll(
    '{{VERSION}}',
    version,
  );
  for (const a of archives)
    manifest = manifest.replaceAll(`{{URI_${a.key}}}`, uri(a)).replaceAll(`{{SHA256_${a.key}}}`, a.sha256);
  checkManifest(manifest, new Map(archives.map((a) => [uri(a), a.sha256])));
  mkdirSync(join(dist, 'krew'), { recursive: true });
  writeFileSync(join(dist, 'krew/aiops.yaml'), manifest);
}

/**
 * Refuses a krew manifest with a placeholder left (or mangled, e.g. padded with spaces), a
 * platform whose uri and sha256 are not one of the archives' (`want`: uri → sha256), or an
 * archive no platform ships.
 */
function checkManifest(text: string, want: ReadonlyMap<string, string>): void {
  const left = /\{\s*\{\s*[A-Z0-9_]+\s*\}\s*\}/.exec(text);
  if (left) throw new Error(`plugin/krew/aiops.yaml: placeholder ${left[0]} left after substitution`);
  const doc = load(text) as { spec?: { platforms?: { uri?: unknown; sha256?: unknown }[] } };
  const platforms = doc.spec?.platforms ?? [];
  if (platforms.length === 0) throw new Error('plugin/krew/aiops.yaml: no spec.platforms');
  for (const p of platforms)
    if (typeof p.uri !== 'string' || want.get(p.uri) !== p.sha256)
      throw new Error(
        `plugin/krew/aiops.yaml: a platform has uri ${JSON.stringify(p.uri)} and sha256 ${JSON.stringify(p.sha256)}, not an archive's`,
      );
  const shipped = new Set(platforms.map((p) => p.uri));
  const unused = [...want.keys()].filter((u) => !shipped.has(u));
  if (unused.length) throw new Error(`plugin/krew/aiops.yaml: no platform ships ${unused.join(', ')}`);
}

/**
 * The platforms that get `kubectl-aiops` as a Node single executable application: krew's
 * os/arch names and Node's arch name. darwin keeps the launcher: a Mach-O binary changed by
 * postject must be signed again (codesign, on macOS) before it runs.
 */
const SEA_PLATFORMS = [
  { os: 'linux', arch: 'amd64', nodeArch: 'x64' },
  { os: 'linux', arch: 'arm64', nodeArch: 'arm64' },
] as const;

/** The fuse postject flips so that a Node binary runs the blob it carries (Node's documented value). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The plugin as one CommonJS file (what a single executable embeds: no chunks, no files beside it). */
async function bundleSingleFile(): Promise<string> {
  const out = join(dist, 'sea', 'kubectl-aiops.cjs');
  await build({
    ...common,
    banner: {},
    format: 'cjs',
    sourcemap: false,
    legalComments: 'none',
    entryPoints: [join(root, 'plugin/main.ts')],
    outfile: out,
    plugins: [trimClientNode(true)],
  });
  return out;
}

/**
 * A linux Node binary for `nodeArch` at this Node's version: this process's own when the arch
 * is the build machine's, else `bin/node` of the npm package `node-linux-<arch>` (fetched
 * with `npm pack` once, kept in $AIOPS_CACHE/node, default ~/.cache/aiops/node).
 */
function nodeBinary(nodeArch: string): string {
  if (nodeArch === process.arch && process.platform === 'linux') return process.execPath;
  const pkg = `node-linux-${nodeArch}`;
  const dir = join(
    process.env['AIOPS_CACHE'] ?? join(homedir(), '.cache', 'aiops'),
    'node',
    `${pkg}-${process.versions.node}`,
  );
  const bin = join(dir, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tgz = execFileSync(
    'npm',
    ['pack', '--silent', `${pkg}@${process.versions.node}`, '--pack-destination', dir],
    {
      encoding: 'utf8',
    },
  ).trim();
  execFileSync('tar', ['-xzf', join(dir, tgz), '-C', dir, 'package/bin/node']);
  rmSync(join(dir, tgz));
  return bin;
}

/**
 * Builds `kubectl-aiops` for one platform as a Node single executable application: the
 * single-file bundle as a SEA blob, with V8's code cache when the target runs this build's
 * Node (a code cache only loads on the same V8 and CPU), injected with postject into that
 * platform's Node binary; packed with the completion helper and the LICENSE.
 */
function packExecutable(version: string, main: string, p: (typeof SEA_PLATFORMS)[number]): Archive {
  const dir = join(dist, 'sea', `${p.os}-${p.arch}`);
  mkdirSync(dir, { recursive: true });
  const blob = join(dir, 'kubectl-aiops.blob');
  const config = join(dir, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: p.nodeArch === process.arch && process.platform === 'linux',
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'ignore' });
  const exe = join(dir, 'kubectl-aiops');
  copyFileSync(nodeBinary(p.nodeArch), exe);
  chmodSync(exe, 0o755);
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/postject/dist/cli.js'),
      exe,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      SEA_FUSE,
    ],
    { stdio: 'ignore' },
  );
  rmSync(blob);
  rmSync(config);
  writeExecutable(join(dir, 'kubectl_complete-aiops'), '#!/bin/sh\nexec kubectl aiops __complete "$@"\n');
  copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
  const file = `kubectl-aiops-v${version}-${p.os}-${p.arch}.tar.gz`;
  const sha256 = pack(file, dir, ['kubectl-aiops', 'kubectl_complete-aiops', 'LICENSE']);
  return { key: `${p.os}_${p.arch}`.toUpperCase(), file, sha256 };
}

async function bundle(e: Entry): Promise<void> {
  const out = join(dist, e.out);
  const name =
    e.out
      .split('/')
      .pop()
      ?.replace(/\.mjs$/, '') ?? 'main';
  await build({
    ...common,
    entryPoints: { [name]: join(root, e.source) },
    outdir: dirname(out),
    outExtension: { '.js': '.mjs' },
    ...(e.split === true ? { splitting: true, chunkNames: 'chunks/[name]-[hash]' } : {}),
    plugins: e.trim === true ? [trimClientNode()] : [],
  });
}

async function main(): Promise<void> {
  const missing = ENTRIES.filter((e) => !existsSync(join(root, e.source)));
  if (missing.length)
    throw new Error(
      `missing entry point(s): ${missing.map((e) => `${e.source} (${e.what})`).join(', ')}; create them or remove them from ENTRIES in scripts/build.ts`,
    );
  const t0 = Date.now();
  rmSync(dist, { recursive: true, force: true });
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
    .version;
  for (const e of ENTRIES) await bundle(e);
  await bundleVendor();
  writeExecutable(join(dist, 'kubectl-aiops'), launcher('kubectl-aiops', ''));
  writeExecutable(join(dist, 'kubectl_complete-aiops'), launcher('kubectl_complete-aiops', '__complete '));
  const built = [...ENTRIES.map((e) => `dist/${e.out}`), 'dist/kubectl-aiops', 'dist/kubectl_complete-aiops'];
  if (process.argv.includes('--release')) {
    const main = await bundleSingleFile();
    const archives = [packLauncher(version), ...SEA_PLATFORMS.map((p) => packExecutable(version, main, p))];
    writeKrewManifest(version, archives);
    built.push(
      `the single executables dist/sea/{${SEA_PLATFORMS.map((p) => `${p.os}-${p.arch}`).join(',')}}/kubectl-aiops`,
      'the krew archives and manifest',
    );
  }
  process.stdout.write(`built ${built.join(', ')} (v${version}) in ${Date.now() - t0} ms\n`);
}

await main();
