import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

/** Runs `code` in a fresh node without --expose-gc; returns its stdout. */
function node(code: string): string {
  const flags = ['--input-type=module', '-e', code];
  return execFileSync(process.execPath, flags, {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}

const MODULE = JSON.stringify(new URL('./full-gc.ts', import.meta.url).href);

// A WeakRef's target survives the job that made or read it, hence the ticks between.
test('fullCollection frees unreachable objects without --expose-gc on the command line', () => {
  const out = node(`
    const { fullCollection } = await import(${MODULE});
    let garbage = { big: new Array(1e6).fill(1) };
    const ref = new WeakRef(garbage);
    garbage = undefined;
    const tick = () => new Promise((r) => setTimeout(r, 0));
    await tick();
    console.log(typeof globalThis.gc, ref.deref() === undefined);
    await tick();
    fullCollection();
    fullCollection();
    console.log(ref.deref() === undefined);
  `);
  assert.equal(out, 'undefined false\ntrue\n', 'no gc() in the program, the object collected by the call');
});
