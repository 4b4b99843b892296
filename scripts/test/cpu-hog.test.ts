// The CPU hog of `npm test -- --busy`: its processes really spin, stop() ends them, and a hog
// whose parent dies without stopping it (SIGKILL) ends by itself.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../test/harness/wait.ts';
import { startCpuHog } from './cpu-hog.ts';

/** CPU time (user + system clock ticks) of `pid`, or undefined once it has gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('each hog process spins until stopped', async () => {
  const hog = startCpuHog(2);
  try {
    assert.equal(hog.pids.length, 2);
    const start = hog.pids.map(cpuTicks);
    await eventually('each hog process using CPU', () =>
      hog.pids.every((pid, i) => (cpuTicks(pid) ?? 0) > (start[i] ?? 0) + 10) ? true : undefined,
    );
  } finally {
    await hog.stop();
  }
  for (const pid of hog.pids) assert.equal(cpuTicks(pid), undefined, `${pid} gone after stop()`);
  await hog.stop();
});

test('a hog whose parent is SIGKILLed ends by itself', async () => {
  const module = fileURLToPath(new URL('./cpu-hog.ts', import.meta.url));
  const parent = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { startCpuHog } = await import(${JSON.stringify(module)}); console.log(startCpuHog(1).pids[0]); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  );
  assert.ok(alive(pid), 'the hog runs');
  parent.kill('SIGKILL');
  await eventually('the orphaned hog gone', () => (alive(pid) ? undefined : true), 60_000);
});
