// esbuild settings the bundles share (`npm run build`, and the `memory` bench, which bundles
// the operator as deployed into a directory of its own): the common options, the startup
// trimming of @kubernetes/client-node, its lazily loaded packages, and the operator's bundle
// directory.

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
 * Node's built-in modules reached through `require` instead of ESM `import`. An ESM import of
 * a built-in builds its namespace from every export, which runs lazy getters the program never
 * reads: `http.WebSocket` evaluates Node's internal undici (a 745 KiB script) and
 * `tls.rootCertificates` parses every root certificate, ~4 MiB of the operator's idle RSS.
 */
const builtinsByRequire: Plugin = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (args.namespace === 'builtin' || !BUILTINS.has(name)) return undefined;
      return { path: name, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
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

/** The file of an operator bundle directory that Node runs (the image's entrypoint). */
export const OPERATOR_MAIN = 'main.mjs';

/**
 * Bundles cmd/operator.ts into `outdir` (e.g. dist/operator), the directory the image ships:
 * `main.mjs` with every dependency the operator runs at start inlined and built-in modules
 * required (builtinsByRequire); code behind a dynamic `import()` (the X.509 code of
 * `--self-signed-cert` and certificate rotation) in chunks beside it, loaded only by the
 * installs that use it; client-node trimmed to KubeConfig with its proxy and cloud-auth
 * packages in `vendor/`, loaded on first use. Every file sits in `outdir` itself, so each one's
 * `./vendor` is the same directory. Left out of main.mjs, the chunks and vendor packages are
 * two thirds of the code (1.6 of 2.2 MB), which V8 would otherwise hold as source and
 * pre-parse at every start.
 */
export async function bundleOperator(outdir: string): Promise<void> {
  await build({
    ...common,
    entryPoints: { main: join(root, 'cmd/operator.ts') },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [builtinsByRequire, trimClientNode('./vendor')],
  });
  await bundleVendor(join(outdir, 'vendor'));
}
