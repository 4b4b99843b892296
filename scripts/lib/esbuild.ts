// esbuild settings the bundles share (`npm run build`, and the `memory` bench, which bundles
// the operator as deployed into a directory of its own): the common options, the startup
// trimming of @kubernetes/client-node, and the operator's one-file bundle.

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
 * A module whose exports forward construct, call and property reads to the vendor bundle on
 * disk, or (`inline`, for the single executable and the operator image, which have no files
 * beside the bundle) to the package bundled in, which esbuild then initialises on first use only.
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
export const trimClientNode = (inline = false): Plugin => ({
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
 * Bundles cmd/operator.ts as the one file the image runs (`outfile`, e.g. dist/operator.mjs):
 * every dependency inlined, built-in modules required (builtinsByRequire), client-node
 * trimmed to KubeConfig with its proxy and cloud-auth packages initialised on first use only
 * (the image has no files beside the bundle).
 */
export async function bundleOperator(outfile: string): Promise<void> {
  await build({
    ...common,
    entryPoints: [join(root, 'cmd/operator.ts')],
    outfile,
    plugins: [builtinsByRequire, trimClientNode(true)],
  });
}
