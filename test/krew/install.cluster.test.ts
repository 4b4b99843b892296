// The plugin as krew users get it: the manifest and archives `npm run build` writes are
// checked by krew's own validator (which installs every platform it declares, downloading
// the archives from a loopback server standing in for the release host) and installed by
// krew itself into a throwaway KREW_ROOT, after which `kubectl aiops` runs through kubectl's
// plugin discovery from that install: the single executable on this machine's platform (no
// Node needed), and the launcher where krew picks the fallback platform.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
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
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { load } from 'js-yaml';
import { testKubeconfig } from '../support/cluster.ts';
import { run as runValidator, skipUnless, validatorPath } from '../olm/validators.ts';
import { buildKrewRelease, kubectl, userPath } from '../support/kubectl-run.ts';

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

/** Serves each file of `files` (URL path → file) on 127.0.0.1; counts the requests served. */
async function releaseHost(
  files: ReadonlyMap<string, string>,
): Promise<{ server: Server; base: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    const file = req.method === 'GET' ? files.get(req.url ?? '') : undefined;
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    hits++;
    const body = readFileSync(file);
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}`, hits: () => hits };
}

/**
 * A fresh KREW_ROOT and the environment krew and the installed plugin run with: no Node on
 * PATH that the plugin could use, unless `node` (the launcher's documented AIOPS_NODE).
 */
function krewEnv(name: string, node = false): { root: string; env: Record<string, string> } {
  const root = join(scratch, name);
  return {
    root,
    env: {
      KREW_ROOT: root,
      KREW_NO_UPGRADE_CHECK: '1',
      PATH: userPath(join(root, 'bin'), krewShim),
      ...(node ? { AIOPS_NODE: process.execPath } : {}),
    },
  };
}

const HOST_ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64';
const escaped = (s: string): string => s.replaceAll('.', '\\.');

void describe('krew', { skip }, () => {
  void test('the generated manifest ships each archive with its sha256 and passes validate-krew-manifest with every platform installed', async () => {
    const m = manifest();
    assert.equal(m.metadata.name, 'aiops');
    assert.equal(m.spec.version, `v${release.version}`);
    const archives = [release.launcherArchive, ...Object.values(release.executableArchives)];
    const byName = new Map(archives.map((a) => [basename(a), a]));
    for (const p of m.spec.platforms) {
      const file = byName.get(basename(new URL(p.uri).pathname));
      assert.ok(file !== undefined, p.uri);
      assert.equal(p.sha256, createHash('sha256').update(readFileSync(file)).digest('hex'), p.uri);
    }
    assert.deepEqual(
      new Set(m.spec.platforms.map((p) => basename(p.uri))),
      new Set(byName.keys()),
      'every archive is shipped',
    );
    // The validator downloads each platform's uri: point it at a loopback stand-in for the
    // release host, leaving everything else (sha256 included) as generated.
    const origin = new URL(m.spec.platforms[0]?.uri ?? '').origin;
    const host = await releaseHost(
      new Map(m.spec.platforms.map((p) => [new URL(p.uri).pathname, byName.get(basename(p.uri)) ?? ''])),
    );
    try {
      const dir = join(scratch, 'validate');
      mkdirSync(dir);
      const local = join(dir, 'aiops.yaml');
      writeFileSync(local, readFileSync(release.manifest, 'utf8').replaceAll(origin, host.base));
      const r = await runValidator('validate-krew-manifest', ['-manifest', local], dir, {
        PATH: userPath(krewShim),
        HOME: dir,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /structural validation OK/);
      assert.match(r.stderr, /no overlapping spec.platform\[\].selector/);
      assert.match(r.stderr, new RegExp(`all ${m.spec.platforms.length} spec.platforms installed fine`));
      assert.equal(host.hits(), m.spec.platforms.length);
    } finally {
      await new Promise((resolve) => host.server.close(resolve));
    }
  });

  void test('kubectl krew install --manifest --archive on this platform: the single executable, then kubectl aiops version through it without Node', async () => {
    const { root, env } = krewEnv('install');
    const install = await kubectl(
      env.PATH ?? '',
      [
        'krew',
        'install',
        `--manifest=${release.manifest}`,
        `--archive=${release.executableArchives[HOST_ARCH]}`,
      ],
      env,
    );
    assert.equal(install.code, 0, install.stderr);
    assert.match(install.stderr + install.stdout, /Installed plugin: aiops/);
    // `krew list` and `krew uninstall` need a cloned plugin index (a download): the receipt
    // they read is checked instead.
    const receipt = load(readFileSync(join(root, 'receipts', 'aiops.yaml'), 'utf8')) as Manifest;
    assert.equal(receipt.spec.version, `v${release.version}`);
    const store = join(root, 'store', 'aiops', `v${release.version}`);
    assert.ok(existsSync(join(root, 'bin', 'kubectl-aiops')));
    assert.ok(existsSync(join(store, 'LICENSE')));
    assert.ok(!existsSync(join(store, 'plugin')), 'no bundle beside the executable');
    assert.equal(readFileSync(join(store, 'kubectl-aiops')).subarray(0, 4).toString('latin1'), '\x7fELF');

    const version = await kubectl(env.PATH ?? '', ['aiops', 'version'], {
      ...env,
      KUBECONFIG: testKubeconfig(),
    });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, new RegExp(`Plugin Version: +v${escaped(release.version)}\\n`));
    assert.match(
      version.stdout,
      new RegExp(`Node.js Version: +${escaped(process.version)} \\(linux/${process.arch}\\)`),
    );
    assert.match(version.stdout, /Server Version: +v1\./);
    assert.match(version.stdout, /AITask API: +aiops\.example\.com .*v2/);
    assert.doesNotMatch(version.stderr, /ExperimentalWarning|SingleExecutableApplication/);
  });

  void test('on a platform without an executable krew installs the launcher, which runs on the Node it is given', async () => {
    const { root, env } = krewEnv('launcher', true);
    const withArch = { ...env, KREW_OS: 'linux', KREW_ARCH: 'ppc64le' };
    const install = await kubectl(
      env.PATH ?? '',
      ['krew', 'install', `--manifest=${release.manifest}`, `--archive=${release.launcherArchive}`],
      withArch,
    );
    assert.equal(install.code, 0, install.stderr);
    assert.ok(existsSync(join(root, 'store', 'aiops', `v${release.version}`, 'plugin', 'main.mjs')));
    const version = await kubectl(env.PATH ?? '', ['aiops', 'version', '--client'], env);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, new RegExp(`Plugin Version: +v${escaped(release.version)}\\n`));
  });

  void test('krew refuses an archive whose sha256 is not the manifest’s', async () => {
    const { env } = krewEnv('tampered');
    const r = await kubectl(
      env.PATH ?? '',
      ['krew', 'install', `--manifest=${release.manifest}`, `--archive=${release.launcherArchive}`],
      env,
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /checksum does not match/);
  });
});
