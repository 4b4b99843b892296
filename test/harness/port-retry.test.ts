// The port retry of the harness without a control plane: which failures are retried (a
// table), the loop with stand-in components whose log says what a Go component says when
// its port was taken, and the check that a port is held by the process itself, against a
// port this test holds.

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Component } from './process.ts';
import { listensOn, PORT_ATTEMPTS, retryOnNewPorts, startOnFreePorts } from './port-retry.ts';

const TAKEN = 'listen tcp 127.0.0.1:40123: bind: address already in use';

test('a retry only for a component that exited on a taken port, with attempts left', () => {
  const table: readonly [boolean, string, number, boolean][] = [
    [true, `E1206 ${TAKEN}\n`, 1, true],
    [true, `error: ${TAKEN}`, PORT_ATTEMPTS - 1, true],
    [true, TAKEN, PORT_ATTEMPTS, false],
    [true, 'open /pki/ca.crt: no such file or directory', 1, false],
    [true, '', 1, false],
    [false, TAKEN, 1, false],
  ];
  for (const [exited, logSinceStart, attempt, retried] of table)
    assert.equal(
      retryOnNewPorts({ exited, logSinceStart, attempt, attempts: PORT_ATTEMPTS }),
      retried,
      JSON.stringify({ exited, logSinceStart, attempt }),
    );
});

/** A stand-in component: exited (with `log` appended to its log file) or running. */
function standIn(logPath: string, outcome: { exitWith?: string }): Component {
  if (outcome.exitWith !== undefined) appendFileSync(logPath, outcome.exitWith);
  const status = outcome.exitWith === undefined ? undefined : 'exit code 1';
  return {
    name: 'stand-in',
    pid: 0,
    binary: '/bin/false',
    logPath,
    exitStatus: () => status,
    stop: () => Promise.resolve(),
  };
}

test('a taken port is retried on newly chosen ports; other failures and the last attempt are not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-port-retry-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = async (
    outcomes: readonly { exitWith?: string }[],
    name: string,
  ): Promise<{ result: unknown; chosen: number[][]; forgotten: number }> => {
    const logPath = join(dir, `${name}.log`);
    const chosen: number[][] = [];
    let next = 40000;
    let forgotten = 0;
    let i = 0;
    const result = await startOnFreePorts({
      name,
      count: 2,
      logPath,
      choose: (n) => {
        const ports = Array.from({ length: n }, () => next++);
        chosen.push(ports);
        return Promise.resolve(ports);
      },
      spawn: () => standIn(logPath, outcomes[i++] ?? {}),
      ready: (_ports, c) =>
        c.exitStatus() === undefined ? Promise.resolve() : Promise.reject(new Error(`${name} exited`)),
      forget: () => {
        forgotten++;
      },
    }).then(
      (r) => r.ports,
      (err: unknown) => err,
    );
    return { result, chosen, forgotten };
  };

  const twice = await run([{ exitWith: TAKEN }, { exitWith: `again ${TAKEN}` }, {}], 'taken-twice');
  assert.deepEqual(twice.result, [40004, 40005], 'started on the third pair of ports');
  assert.deepEqual(twice.chosen, [
    [40000, 40001],
    [40002, 40003],
    [40004, 40005],
  ]);
  assert.equal(twice.forgotten, 2, 'each exited attempt is forgotten');

  const other = await run([{ exitWith: 'no such file' }, {}], 'other-failure');
  assert.match(String(other.result), /other-failure exited/);
  assert.equal(other.chosen.length, 1, 'no retry');

  // The log of an earlier attempt does not make a later, different failure look like a taken port.
  const stale = await run([{ exitWith: TAKEN }, { exitWith: 'segfault' }, {}], 'stale-log');
  assert.match(String(stale.result), /stale-log exited/);
  assert.equal(stale.chosen.length, 2);

  const always = await run(
    Array.from({ length: PORT_ATTEMPTS + 1 }, () => ({ exitWith: TAKEN })),
    'always-taken',
  );
  assert.match(String(always.result), /always-taken exited/);
  assert.equal(always.chosen.length, PORT_ATTEMPTS, 'bounded');
});

test('listensOn: true for a port this process listens on, false for a port it does not hold', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  assert.equal(await listensOn(process.pid, [port]), true);
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const { port: closed } = other.address() as AddressInfo;
  await new Promise<void>((resolve) => other.close(() => resolve()));
  assert.equal(await listensOn(process.pid, [port, closed]), false, 'every port must be held');
  assert.equal(await listensOn(process.ppid, [port]), false, 'another process does not hold it');
});
