// The README's "Try the image and the plain install locally" block, run as a user types it
// (its own persistent cluster dir): every command must succeed, and the machine must be left
// as it was found. In test/real-node/ so it runs one at a time with the other real-node suites.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultBinDir } from '../harness/paths.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import { machineSnapshot, readmeShBlock } from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir());

describe(
  'README: "Try the image and the plain install locally" as typed',
  { skip: unavailable ?? false, timeout: 600_000 },
  () => {
    it('runs every command of the block and leaves the machine as it found it', () => {
      const block = readmeShBlock('## Try the image and the plain install locally');
      assert.ok(block.includes('npm run cluster -- up --real-node'), 'the README block is found');
      const before1 = machineSnapshot();
      const dir = mkdtempSync(join(tmpdir(), 'aiops-readme-'));
      try {
        execFileSync('bash', ['-euo', 'pipefail', '-c', block], {
          cwd: root,
          env: { ...process.env, AIOPS_CLUSTER_DIR: join(dir, 'cluster') },
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 480_000,
        });
      } catch (err) {
        execFileSync('npm', ['run', '-s', 'cluster', '--', 'down'], {
          cwd: root,
          env: { ...process.env, AIOPS_CLUSTER_DIR: join(dir, 'cluster') },
          stdio: 'ignore',
        });
        const e = err as { stderr?: Buffer; stdout?: Buffer };
        assert.fail(`the README block failed:\n${e.stdout?.toString() ?? ''}\n${e.stderr?.toString() ?? ''}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      assert.deepEqual(machineSnapshot(), before1);
    });
  },
);
