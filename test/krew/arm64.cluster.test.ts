// The linux arm64 single executable as krew ships it, which no arm64 machine runs here: the
// arm64 archive the release writes is extracted and laid out the way krew would (the
// manifest's files and bin for os=linux, arch=arm64), and the executable runs under qemu's
// user-mode emulator against the arm64 libraries Debian's cross packages install. Also checks
// that each linux archive carries an executable for its own CPU (the ELF header's machine).
// Without qemu or the cross libraries it skips, or fails when AIOPS_REQUIRE_REAL_NODE is set.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { load } from 'js-yaml';
import { REQUIRE_REAL_NODE, skipUnlessRequired } from '../harness/required.ts';
import { testKubeconfig } from '../support/cluster.ts';
import { buildKrewRelease, userPath, type KrewRelease } from '../support/kubectl-run.ts';
import { buildProgram } from '../../plugin/program.ts';

/** Where Debian's *-arm64-cross packages install the arm64 runtime (qemu's -L prefix). */
const SYSROOT = '/usr/aarch64-linux-gnu';
/** qemu's user-mode emulator for arm64 (Debian package qemu-user). */
const QEMU = '/usr/bin/qemu-aarch64';

/** What running an arm64 Node binary needs here: file → the Debian package that installs it. */
const NEEDS: readonly (readonly [file: string, pkg: string])[] = [
  [QEMU, 'qemu-user'],
  [`${SYSROOT}/lib/ld-linux-aarch64.so.1`, 'libc6-arm64-cross'],
  [`${SYSROOT}/lib/libstdc++.so.6`, 'libstdc++6-arm64-cross'],
  [`${SYSROOT}/lib/libgcc_s.so.1`, 'libgcc-s1-arm64-cross'],
];
const missing = NEEDS.filter(([file]) => !existsSync(file)).map(([, pkg]) => pkg);
const noQemu = skipUnlessRequired(
  REQUIRE_REAL_NODE,
  missing.length > 0 ? `needs Debian packages: apt-get install ${missing.join(' ')}` : undefined,
);

/** ELF e_machine values (the 2 bytes at offset 18) of the arches the release ships. */
const ELF_MACHINE = { amd64: 0x3e, arm64: 0xb7 } as const;

interface Platform {
  selector?: { matchLabels?: Record<string, string> };
  uri: string;
  sha256: string;
  files: { from: string; to: string }[];
  bin: string;
}

let release: KrewRelease;
let scratch = '';

before(() => {
  release = buildKrewRelease();
  scratch = mkdtempSync(join(tmpdir(), 'aiops-arm64-'));
});
after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The manifest's platform selected by exactly os=linux and `arch`. */
function platform(arch: keyof typeof ELF_MACHINE): Platform {
  const doc = load(readFileSync(release.manifest, 'utf8')) as { spec: { platforms: Platform[] } };
  const p = doc.spec.platforms.find(
    (x) => x.selector?.matchLabels?.['os'] === 'linux' && x.selector.matchLabels['arch'] === arch,
  );
  assert.ok(p, `the manifest has a platform for linux/${arch}`);
  return p;
}

const layouts = new Map<keyof typeof ELF_MACHINE, string>();

/**
 * Extracts `arch`'s archive into a fresh directory and copies its `files` into an install
 * directory as krew does, after checking the archive is the one the manifest names with its
 * sha256. Returns the path of the platform's `bin` in the install directory.
 */
function krewLayout(arch: keyof typeof ELF_MACHINE): string {
  const done = layouts.get(arch);
  if (done !== undefined) return done;
  const p = platform(arch);
  const archive = release.executableArchives[arch];
  assert.equal(basename(new URL(p.uri).pathname), basename(archive));
  assert.equal(p.sha256, createHash('sha256').update(readFileSync(archive)).digest('hex'));
  const extracted = join(scratch, `${arch}-extracted`);
  const installed = join(scratch, `${arch}-installed`);
  mkdirSync(extracted);
  mkdirSync(installed);
  execFileSync('tar', ['-xzf', archive, '-C', extracted]);
  for (const f of p.files) cpSync(join(extracted, f.from), join(installed, f.to, basename(f.from)));
  const bin = join(installed, p.bin);
  layouts.set(arch, bin);
  return bin;
}

/** The first 20 bytes of `file`: ELF ident, e_type and e_machine. */
function elfHeader(file: string): Buffer {
  const head = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  return head;
}

/** Runs `exe args` under qemu-aarch64 with the cross sysroot; never throws on a non-zero exit. */
function qemu(
  exe: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      QEMU,
      ['-L', SYSROOT, exe, ...args],
      { env: { PATH: userPath(), HOME: scratch, ...env }, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}

void describe('linux single executables', () => {
  void test('each linux archive carries a 64-bit little-endian ELF executable for its own CPU', () => {
    for (const arch of ['amd64', 'arm64'] as const) {
      const head = elfHeader(krewLayout(arch));
      assert.equal(head.subarray(0, 4).toString('latin1'), '\x7fELF', arch);
      assert.equal(head[4], 2, `${arch}: ELFCLASS64`);
      assert.equal(head[5], 1, `${arch}: little-endian`);
      assert.ok([2, 3].includes(head.readUInt16LE(16)), `${arch}: ET_EXEC or ET_DYN`);
      assert.equal(head.readUInt16LE(18), ELF_MACHINE[arch], `${arch}: e_machine`);
    }
  });
});

void describe('linux arm64 single executable under qemu', { skip: noQemu }, () => {
  const escaped = (s: string): string => s.replaceAll('.', '\\.');

  void test('version --client prints the package version, on arm64', async () => {
    const r = await qemu(krewLayout('arm64'), ['version', '--client', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      pluginVersion: `v${release.version}`,
      nodeVersion: process.version,
      platform: 'linux/arm64',
    });
    assert.equal(r.stderr, '');
  });

  void test('version reaches the test cluster over TLS and reads the served AITask versions', async () => {
    const r = await qemu(krewLayout('arm64'), ['version'], { KUBECONFIG: testKubeconfig() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Plugin Version: +v${escaped(release.version)}\\n`));
    assert.match(
      r.stdout,
      new RegExp(`Node\\.js Version: +${escaped(process.version)} \\(linux/arm64\\)\\n`),
    );
    assert.match(r.stdout, /Server Version: +v1\./);
    assert.match(r.stdout, /AITask API: +aiops\.example\.com .*v2/);
    assert.doesNotMatch(r.stderr, /ExperimentalWarning|SingleExecutableApplication/);
  });

  void test('--help lists every command of the program', async () => {
    const r = await qemu(krewLayout('arm64'), ['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: kubectl aiops \[options\] \[command\]/);
    const listed = [...r.stdout.matchAll(/^ {2}([a-z][a-z-]+)(?= )/gm)].map((m) => m[1]);
    const io = { out: () => undefined, err: () => undefined, isTTY: false, env: {}, now: () => new Date() };
    const program = buildProgram(io, { exitCode: 0, errorContext: {} });
    assert.deepEqual(
      listed,
      program.commands.map((c) => c.name()),
    );
  });
});
