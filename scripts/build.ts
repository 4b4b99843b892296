// `npm run build`: bundles the entry points with esbuild into dist/ and writes the
// executables users run: `dist/kubectl-aiops` (found by kubectl's plugin discovery) and
// `dist/kubectl_complete-aiops` (its shell completion), small POSIX sh launchers that pick a
// Node.js >= 22 (the package's own `node` dependency first, since the system one may be
// older). Also packs the plugin as a krew archive with a manifest carrying its sha256.

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** A module whose exports forward construct, call and property reads to the vendor bundle. */
function lazyModule(pkg: string): string {
  const names = LAZY_VENDOR[pkg] ?? [];
  return [
    'import { createRequire } from "node:module";',
    'let mod;',
    `const load = () => (mod ??= createRequire(import.meta.url)("../vendor/${pkg}.cjs"));`,
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
 * are loaded on first use.
 */
const trimClientNode: Plugin = {
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
      contents: lazyModule(args.path),
    }));
  },
};

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

/** Packs the plugin for krew and writes the manifest with the archive's uri and sha256. */
function packKrew(version: string): void {
  const archive = `kubectl-aiops-v${version}.tar.gz`;
  copyFileSync(join(root, 'LICENSE'), join(dist, 'LICENSE'));
  execFileSync('tar', ['-czf', archive, 'kubectl-aiops', 'kubectl_complete-aiops', 'plugin', 'LICENSE'], {
    cwd: dist,
  });
  const sha256 = createHash('sha256')
    .update(readFileSync(join(dist, archive)))
    .digest('hex');
  const template = readFileSync(join(root, 'plugin/krew/aiops.yaml'), 'utf8');
  mkdirSync(join(dist, 'krew'), { recursive: true });
  const uri = `${RELEASE_BASE_URL}/v${version}/${archive}`;
  const manifest = template
    .replaceAll('{{VERSION}}', version)
    .replaceAll('{{SHA256}}', sha256)
    .replaceAll('{{URI}}', uri);
  checkManifest(manifest, { uri, sha256 });
  writeFileSync(join(dist, 'krew/aiops.yaml'), manifest);
}

/**
 * Refuses a krew manifest with a placeholder left (or mangled, e.g. `{ { URI } }`) or whose
 * platforms do not carry exactly the archive's uri and sha256.
 */
function checkManifest(text: string, want: { uri: string; sha256: string }): void {
  const left = /\{\s*\{\s*[A-Z0-9_]+\s*\}\s*\}/.exec(text);
  if (left) throw new Error(`plugin/krew/aiops.yaml: placeholder ${left[0]} left after substitution`);
  const doc = load(text) as { spec?: { platforms?: { uri?: unknown; sha256?: unknown }[] } };
  const platforms = doc.spec?.platforms ?? [];
  if (platforms.length === 0) throw new Error('plugin/krew/aiops.yaml: no spec.platforms');
  for (const p of platforms)
    if (p.uri !== want.uri || p.sha256 !== want.sha256)
      throw new Error(
        `plugin/krew/aiops.yaml: a platform has uri ${JSON.stringify(p.uri)} and sha256 ${JSON.stringify(p.sha256)}, not the archive's`,
      );
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
    plugins: e.trim === true ? [trimClientNode] : [],
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
  packKrew(version);
  process.stdout.write(
    `built ${ENTRIES.map((e) => `dist/${e.out}`).join(', ')}, dist/kubectl-aiops, dist/kubectl_complete-aiops and the krew archive + manifest (v${version}) in ${Date.now() - t0} ms\n`,
  );
}

await main();
