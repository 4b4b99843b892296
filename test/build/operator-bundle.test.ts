// The operator's bundle directory (dist/operator/, what the image ships) holds what the idle
// RSS and start figures of `npm run bench -- peer` depend on: operator.mjs carries only what every
// install runs; the X.509 code, the PromQL parser and client-node's proxy and cloud-auth
// packages sit beside it and load on first use from where the bundle looks for them; and no
// file has a character outside ASCII (one would make V8 keep the file's whole source as a
// two-byte string); main.mjs starts it from the V8 compile cache made at build; and a start
// loads none of the built-in modules that only features it does not use need.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import {
  bundleOperator,
  COMPILE_CACHE_DIR,
  LAZY_VENDOR,
  OPERATOR_CODE,
  OPERATOR_MAIN,
} from '../../scripts/lib/esbuild.ts';

let dir = '';
let files: string[] = [];
before(async () => {
  dir = join(mkdtempSync(join(tmpdir(), 'aiops-operator-bundle-')), 'operator');
  await bundleOperator(dir);
  files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(mjs|cjs)$/.test(f));
});
after(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

/** The sources esbuild put into `file` (from its source map), as paths relative to the repository. */
function sourcesOf(file: string): string[] {
  const map = JSON.parse(readFileSync(join(dir, `${file}.map`), 'utf8')) as { sources: string[] };
  return map.sources.map((s) => s.replace(/^(\.\.\/)+/, ''));
}

test('every file of the bundle is ASCII, so V8 holds its source one byte a character', () => {
  for (const f of [OPERATOR_MAIN, OPERATOR_CODE]) assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'latin1');
    const at = text.search(/[^\t\n\r\x20-\x7e]/);
    assert.equal(
      at,
      -1,
      `${f} has a byte outside printable ASCII at ${at}: …${text.slice(Math.max(0, at - 40), at + 10)}…`,
    );
  }
});

test('operator.mjs leaves out the X.509 code, the PromQL parser and the vendor packages, and stays under 450 KB', () => {
  const heavy =
    /node_modules\/(undici|socks|socks-proxy-agent|hpagent|jsonpath-plus|@peculiar\/[^/]+|asn1js|@lezer\/[^/]+|@prometheus-io\/lezer-promql)\//;
  const inMain = sourcesOf(OPERATOR_CODE).filter((s) => heavy.test(s));
  assert.deepEqual(inMain, [], 'loaded by every install at start');
  const statics = [...readFileSync(join(dir, OPERATOR_CODE), 'utf8').matchAll(/from"\.\/([^"]+)"/g)].map(
    (m) => m[1] ?? '',
  );
  for (const chunk of statics)
    assert.deepEqual(
      sourcesOf(chunk).filter((s) => heavy.test(s)),
      [],
      `${chunk}, imported by operator.mjs at start`,
    );
  const size = readFileSync(join(dir, OPERATOR_CODE)).length;
  assert.ok(size < 450_000, `operator.mjs is ${size} bytes`);
  const x509 = files.filter(
    (f) => f !== OPERATOR_MAIN && sourcesOf(f).some((s) => s.includes('node_modules/@peculiar/x509/')),
  );
  assert.equal(x509.length, 1, `one chunk holds the X.509 code: ${x509.join(', ')}`);
});

test('each vendor package loads from ./vendor of the file that asks for it, with the exports client-node uses', () => {
  const load = createRequire(join(dir, OPERATOR_CODE));
  for (const [pkg, names] of Object.entries(LAZY_VENDOR)) {
    const asker = files.filter(
      (f) => !f.startsWith('vendor/') && readFileSync(join(dir, f), 'utf8').includes(`"./vendor/${pkg}.cjs"`),
    );
    assert.equal(asker.length, 1, `one file loads ./vendor/${pkg}.cjs: ${asker.join(', ')}`);
    const mod = load(`./vendor/${pkg}.cjs`) as Record<string, unknown>;
    for (const n of names) assert.equal(typeof mod[n], 'function', `${pkg}.${n}`);
  }
});

test('main.mjs starts the operator from the compile cache made at build, after the directory moved', () => {
  assert.ok(readdirSync(join(dir, COMPILE_CACHE_DIR)).length > 0, `${COMPILE_CACHE_DIR}/ is filled`);
  const moved = join(dir, '..', 'moved');
  cpSync(dir, moved, { recursive: true });
  const run = spawnSync(process.execPath, [join(moved, OPERATOR_MAIN), '--help'], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /--kubeconfig/);
  const code = pathToFileURL(join(moved, OPERATOR_CODE)).href;
  assert.ok(
    run.stderr.includes(`V8 code cache for ESM ${code} was accepted`),
    `the cache of ${code} was not used:\n${run.stderr.slice(0, 2000)}`,
  );
});

test('a start loads none of the built-ins that only features it does not use need', () => {
  // Node's list of the built-in modules this process loaded, printed as it exits.
  const hook = `process.on('exit', () => process.stderr.write(JSON.stringify(process.moduleLoadList)));`;
  const run = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, join(dir, OPERATOR_MAIN), '--help'],
    { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } },
  );
  assert.equal(run.status, 0, run.stderr);
  const loaded = new Set(JSON.parse(run.stderr) as string[]);
  assert.ok(loaded.has('NativeModule tls'), 'the list is the one of this start');
  const unused = {
    zlib: "prom-client's Pushgateway",
    'internal/fs/promises': 'node:fs/promises (readline and the file watchers with it)',
    'internal/deps/undici/undici': "node:http's WebSocket getter",
    'internal/crypto/webcrypto': 'WebCrypto, for self-signed certificates only',
    'internal/http2/core': 'HTTP/2',
  };
  for (const [mod, what] of Object.entries(unused))
    assert.ok(!loaded.has(`NativeModule ${mod}`), `${mod} (${what}) is loaded at start`);
});
