// esbuild settings the bundles share (`npm run build`, and the `memory` bench, which bundles
// the operator as deployed into a directory of its own): the common options, the startup
// trimming of @kubernetes/client-node, its lazily loaded packages, and the operator's bundle
// directory.

import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Node.js major version the bundles need (commander 15 requires Node >= 22.12). */
export const MIN_NODE_MAJOR = 22;

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
export const LAZY_VENDOR: Readonly<Record<string, readonly string[]>> = {
  undici: ['Agent', 'ProxyAgent', 'fetch'],
  socks: ['SocksClient'],
  'socks-proxy-agent': ['SocksProxyAgent'],
  hpagent: ['HttpProxyAgent', 'HttpsProxyAgent'],
  'jsonpath-plus': ['JSONPath'],
};

/**
 * Source of a function that forwards construct, call and property reads to what `target` (an
 * expression, evaluated at each use) gives: how a lazily loaded module's export stands in for it.
 */
const forwarder = (target: string): string =>
  [
    'new Proxy(function () {}, {',
    `  construct: (_t, args) => Reflect.construct(${target}, args),`,
    `  apply: (_t, self, args) => Reflect.apply(${target}, self, args),`,
    `  get: (_t, key) => ${target}[key],`,
    '})',
  ].join('\n');

/**
 * A module whose exports forward construct, call and property reads to the package on first
 * use: loaded from `<vendorDir>/<pkg>.cjs` relative to the output file holding this module,
 * or, when `vendorDir` is undefined (the single executable, which has no files beside it),
 * from the package bundled in, which esbuild then initialises on first use only.
 */
function lazyModule(pkg: string, vendorDir: string | undefined): string {
  const names = LAZY_VENDOR[pkg] ?? [];
  return [
    'import { createRequire } from "node:module";',
    'let mod;',
    vendorDir === undefined
      ? `const load = () => (mod ??= require(${JSON.stringify(pkg)}));`
      : `const load = () => (mod ??= createRequire(import.meta.url)(${JSON.stringify(`${vendorDir}/${pkg}.cjs`)}));`,
    `const lazy = (name) => ${forwarder('load()[name]')};`,
    ...names.map((n) => `export const ${n} = lazy(${JSON.stringify(n)});`),
  ].join('\n');
}

/**
 * Startup trimming for @kubernetes/client-node, of which only KubeConfig is used: its modules
 * are marked side-effect free so unused API classes are dropped, and LAZY_VENDOR packages
 * are loaded on first use, from `vendorDir` (relative to the output file; see bundleVendor) or,
 * when it is undefined, from the bundle itself.
 */
export const trimClientNode = (vendorDir: string | undefined): Plugin => ({
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
      contents: lazyModule(args.path, vendorDir),
    }));
  },
});

/**
 * `require` calls of dependencies, at their top level, for features the operator never uses at
 * start: prom-client's Pushgateway (its module loads zlib, ~3 ms of every start) and the
 * OpenTelemetry API its CPU counters read only with exemplars on (22 KB of code). Each such
 * `require` gets a function that forwards construct, call and property reads to the module's
 * exports, which the bundle then initialises on first use only. `importer` ends the requiring
 * file's path; `request` is the string it passes to `require`.
 */
const LAZY_REQUIRES: readonly { readonly importer: string; readonly request: string }[] = [
  { importer: '/node_modules/prom-client/index.js', request: './lib/pushgateway' },
  { importer: '/node_modules/prom-client/lib/metrics/processCpuTotal.js', request: '@opentelemetry/api' },
];

const lazyRequires: Plugin = {
  name: 'lazy-requires',
  setup(b) {
    const requests = new Set(LAZY_REQUIRES.map((l) => l.request));
    const filter = new RegExp(`^(${[...requests].map((r) => r.replace(/[./]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, async (args) => {
      const lazy = LAZY_REQUIRES.some((l) => l.request === args.path && args.importer.endsWith(l.importer));
      if (!lazy || args.kind !== 'require-call') return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir });
      return { path: r.path, namespace: 'aiops-lazy-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'aiops-lazy-require' }, (args) => ({
      resolveDir: dirname(args.path),
      contents: [
        'let mod;',
        `const load = () => (mod ??= require(${JSON.stringify(args.path)}));`,
        `module.exports = ${forwarder('load()')};`,
      ].join('\n'),
    }));
  },
};

/** Options every bundle shares: one ESM file for Node, minified, with a linked source map. */
export const common: BuildOptions = {
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

const BUILTINS = new Set(builtinModules);

/**
 * The ESM face of built-in `name` for `import` statements: its module, required once, as the
 * default export, and each of its exports (the names Node's own ESM face has) read from it
 * once, by an expression marked pure so that esbuild drops those no importer names. A named
 * export that is a lazy getter (`crypto.webcrypto`) is thus read where the bundle starts if
 * any module names it, even one loaded later; the program reads such objects through their
 * globals (`globalThis.crypto`) instead.
 */
function builtinImports(name: string): string {
  const keys = Object.keys(process.getBuiltinModule(`node:${name}`) ?? {});
  return [
    `const m = require(${JSON.stringify(`node:${name}`)});`,
    ...keys.map((k, i) => `const e${i} = /* @__PURE__ */ (() => m[${JSON.stringify(k)}])();`),
    `export { m as default${keys.map((k, i) => `, e${i} as ${JSON.stringify(k)}`).join('')} };`,
  ].join('\n');
}

/**
 * Node's built-in modules reached through `require` instead of ESM `import`. An ESM import of
 * a built-in builds its namespace from every export, which runs lazy getters the program never
 * reads: `http.WebSocket` evaluates Node's internal undici (a 745 KiB script) and
 * `tls.rootCertificates` parses every root certificate, ~4 MiB of the operator's idle RSS.
 * An `import` statement gets builtinImports, which reads only the exports it names; `require`
 * and `import()` get the module itself. (Given the module as CommonJS, every importing file
 * would copy all of its exports into an object of its own at start: 2,195 properties, 7-12 ms
 * on a busy 2-core machine.)
 */
const builtinsByRequire: Plugin = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (args.namespace === 'builtin' || !BUILTINS.has(name)) return undefined;
      const esm = args.kind === 'import-statement' && args.namespace !== 'builtin-imports';
      return { path: name, namespace: esm ? 'builtin-imports' : 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'builtin-imports' }, (args) => ({
      contents: builtinImports(args.path),
      loader: 'js',
    }));
  },
};

/**
 * Bundles each LAZY_VENDOR package as CommonJS into `dir` (`<dir>/<pkg>.cjs`), where the
 * modules trimClientNode makes load them from on first use.
 */
async function bundleVendor(dir: string): Promise<void> {
  for (const pkg of Object.keys(LAZY_VENDOR)) {
    await build({
      ...common,
      banner: {},
      format: 'cjs',
      stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root },
      outfile: join(dir, `${pkg}.cjs`),
    });
  }
}

/** The file of an operator bundle directory that Node runs (the image's entrypoint): operatorEntry. */
export const OPERATOR_MAIN = 'main.mjs';

/** The file of an operator bundle directory holding the operator's code, which OPERATOR_MAIN imports. */
export const OPERATOR_CODE = 'operator.mjs';

/** The directory, beside the bundle's files, of V8's compile cache of them (see warmCompileCache). */
export const COMPILE_CACHE_DIR = 'compile-cache';

/**
 * OPERATOR_MAIN: turns on Node's compile cache in COMPILE_CACHE_DIR beside it, portable (keyed by
 * paths relative to that directory, so the directory may move, as the image's build stage moves
 * it), then imports OPERATOR_CODE. With the cache V8 reads the bundle's compiled code instead of
 * parsing 390 KB of source at every start. A cache that is missing, stale, made by another Node
 * version or another user (Node keys it by both), or a Node without the option, only costs that
 * gain: the code is compiled from source as without it, and nothing is written on a read-only
 * filesystem.
 */
function operatorEntry(): string {
  return [
    `import { enableCompileCache } from 'node:module';`,
    `import { fileURLToPath } from 'node:url';`,
    `try {`,
    `  enableCompileCache({ directory: fileURLToPath(new URL('./${COMPILE_CACHE_DIR}', import.meta.url)), portable: true });`,
    `} catch {`,
    `  // a Node without the portable option: start without the cache`,
    `}`,
    `await import('./${OPERATOR_CODE}');`,
    ``,
  ].join('\n');
}

/**
 * Fills `outdir`'s COMPILE_CACHE_DIR for this Node and this user by running the bundle once with
 * `--help`, which loads every module OPERATOR_MAIN loads at start and exits; what the run writes
 * is the compiled code of each module's top level, as V8 caches it after compiling.
 */
function warmCompileCache(outdir: string): void {
  rmSync(join(outdir, COMPILE_CACHE_DIR), { recursive: true, force: true });
  execFileSync(process.execPath, [join(outdir, OPERATOR_MAIN), '--help'], {
    stdio: 'ignore',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
}

/**
 * Bundles cmd/operator.ts into `outdir` (e.g. dist/operator), the directory the image ships:
 * OPERATOR_CODE with every dependency the operator runs at start inlined, built-in modules
 * required (builtinsByRequire) and LAZY_REQUIRES initialised on first use; code behind a
 * dynamic `import()` (the X.509 code of `--self-signed-cert` and certificate rotation) in
 * chunks beside it, loaded only by the installs that use it; client-node trimmed to KubeConfig with its proxy and cloud-auth
 * packages in `vendor/`, loaded on first use; OPERATOR_MAIN, which starts it with the compile
 * cache warmCompileCache fills. Every file sits in `outdir` itself, so each one's `./vendor` is
 * the same directory. Left out of OPERATOR_CODE, the chunks and vendor packages are two thirds
 * of the code (1.6 of 2.2 MB), which V8 would otherwise hold as source and pre-parse at every
 * start. `plugins` run before the bundle's own (default none): how a bench bundles a baseline
 * that differs in one module.
 */
export async function bundleOperator(outdir: string, plugins: readonly Plugin[] = []): Promise<void> {
  await build({
    ...common,
    entryPoints: { operator: join(root, 'cmd/operator.ts') },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [...plugins, builtinsByRequire, lazyRequires, trimClientNode('./vendor')],
  });
  writeFileSync(join(outdir, OPERATOR_MAIN), operatorEntry());
  await bundleVendor(join(outdir, 'vendor'));
  warmCompileCache(outdir);
}
