// The plugin as krew users get it: the manifest and archive `npm run build` writes are
// checked by krew's own validator (which installs every platform it declares, downloading
// the archive from a loopback server standing in for the release host) and installed by
// krew itself into a throwaway KREW_ROOT, after which `kubectl aiops` runs through kubectl's
// plugin discovery from that install.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { load } from 'js-yaml';
import { testKubeconfig } from '../test/support/cluster.ts';
import { run as runValidator, skipUnless, validatorPath } from '../test/olm/validators.ts';
import { buildKrewRelease, kubectl, userPath } from './kubectl-run.ts';

const skip = skipUnless('krew') || skipUnless('validate-krew-manifest');
let scratch = '';
/** A directory holding `kubectl-krew`, so that `kubectl krew` resolves through plugin discovery. */
let krewShim = '';
let release: ReturnType<typeof buildKrewRelease>;

interface Manifest {
  metadata: { name: string };
  spec: { version: string; platforms: { uri: string; sha256: string; bin: string }[] };
}
const manifest = (): Manifest => load(readFileSync(release.manifest, 'utf8')) as Manifest;

before(() => {
  if (skip) return;
  release = buildKrewRelease();
  scratch = mkdtempSync(join(tmpdir(), 'aiops-krew-'));
  krewShim = join(scratch, 'shim');
  mkdirSync(krewShim);
  symlinkSync(validatorPath('krew'), join(krewShim, 'kubectl-krew'));
});
after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Serves `file` at `path` on 127.0.0.1; counts the requests for it. */
async function releaseHost(
  path: string,
  file: string,
): Promise<{ server: Server; base: string; hits: () => number }> {
  let hits = 0;
  const body = readFileSync(file);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === path) {
      hits++;
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': body.length });
      res.end(body);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}`, hits: () => hits };
}

/** A fresh KREW_ROOT and the environment krew and the installed plugin run with. */
function krewEnv(name: string): { root: string; env: Record<string, string> } {
  const root = join(scratch, name);
  return {
    root,
    env: {
      KREW_ROOT: root,
      KREW_NO_UPGRADE_CHECK: '1',
      PATH: userPath(join(root, 'bin'), krewShim),
      // The launcher's documented override (the krew caveat): this machine's node may be older.
      AIOPS_NODE: process.execPath,
    },
  };
}

void describe('krew', { skip }, () => {
  void test('the generated manifest carries the archive uri and sha256 and passes validate-krew-manifest with every platform installed', async () => {
    const m = manifest();
    assert.equal(m.metadata.name, 'aiops');
    assert.equal(m.spec.version, `v${release.version}`);
    const sha = execFileSync('sha256sum', [release.archive], { encoding: 'utf8' }).split(' ')[0];
    for (const p of m.spec.platforms) {
      assert.equal(p.sha256, sha);
      assert.match(
        p.uri,
        new RegExp(`^https://.*/kubectl-aiops-v${release.version.replaceAll('.', '\\.')}\\.tar\\.gz$`),
      );
    }
    // The validator downloads each platform's uri: point it at a loopback stand-in for the
    // release host, leaving everything else (sha256 included) as generated.
    const path = new URL(m.spec.platforms[0]?.uri ?? '').pathname;
    const host = await releaseHost(path, release.archive);
    try {
      const dir = join(scratch, 'validate');
      mkdirSync(dir);
      const local = join(dir, 'aiops.yaml');
      writeFileSync(
        local,
        readFileSync(release.manifest, 'utf8').replaceAll(
          new URL(path, m.spec.platforms[0]?.uri).href,
          host.base + path,
        ),
      );
      const r = await runValidator('validate-krew-manifest', ['-manifest', local], dir, {
        PATH: userPath(krewShim),
        HOME: dir,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /structural validation OK/);
      assert.match(r.stderr, new RegExp(`all ${m.spec.platforms.length} spec.platforms installed fine`));
      assert.equal(host.hits(), m.spec.platforms.length);
    } finally {
      await new Promise((resolve) => host.server.close(resolve));
    }
  });

  void test('kubectl krew install --manifest --archive, then kubectl aiops version through that install', async () => {
    const { root, env } = krewEnv('install');
    const install = await kubectl(
      env.PATH ?? '',
      ['krew', 'install', `--manifest=${release.manifest}`, `--archive=${release.archive}`],
      env,
    );
    assert.equal(install.code, 0, install.stderr);
    assert.match(install.stderr + install.stdout, /Installed plugin: aiops/);
    // `krew list` and `krew uninstall` need a cloned plugin index (a download): the receipt
    // they read is checked instead.
    const receipt = load(readFileSync(join(root, 'receipts', 'aiops.yaml'), 'utf8')) as Manifest;
    assert.equal(receipt.spec.version, `v${release.version}`);
    assert.ok(existsSync(join(root, 'bin', 'kubectl-aiops')));
    assert.ok(existsSync(join(root, 'store', 'aiops', `v${release.version}`, 'LICENSE')));

    const version = await kubectl(env.PATH ?? '', ['aiops', 'version'], {
      ...env,
      KUBECONFIG: testKubeconfig(),
    });
    assert.equal(version.code, 0, version.stderr);
    assert.match(
      version.stdout,
      new RegExp(`Plugin Version: +v${release.version.replaceAll('.', '\\.')}\\n`),
    );
    assert.match(version.stdout, /Server Version: +v1\./);
    assert.match(version.stdout, /AITask API: +aiops\.example\.com .*v2/);
  });

  void test('krew refuses an archive whose sha256 is not the manifest’s', async () => {
    const { env } = krewEnv('tampered');
    const other = join(scratch, 'other.tar.gz');
    execFileSync('tar', ['-czf', other, '-C', join(release.archive, '..'), 'LICENSE']);
    const r = await kubectl(
      env.PATH ?? '',
      ['krew', 'install', `--manifest=${release.manifest}`, `--archive=${other}`],
      env,
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /checksum does not match/);
  });
});
