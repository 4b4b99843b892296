// The options table: keys must be commander's attribute names; values come typed from each
// flag's parser, default or environment variable (the flag winning); a bad value is a usage
// error; the docs' rows name every long name and variable; the integer and switch parsers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command, CommanderError } from 'commander';
import fc from 'fast-check';
import {
  bool,
  flag,
  flagsMarkdown,
  integer,
  optionsTable,
  text,
  toggle,
  withTable,
} from './options-table.ts';

const FLAGS = {
  port: flag({ flags: '--port <n>', help: 'port', parse: integer(0, 65535), default: 9443 }),
  name: flag({
    flags: '--name <s>',
    help: 'name',
    parse: text,
    docs: { default: 'none', meaning: 'a name' },
  }),
  verbose: toggle('--verbose', 'talk', false, { default: 'off', meaning: 'talk more' }),
  logLevel: flag({
    flags: '--zap-log-level, --log-level <l>',
    help: 'level',
    parse: text,
    default: 'info',
    env: false,
    docsEnv: 'LEVEL',
  }),
};
const TABLE = optionsTable(FLAGS, (long) => `T_${long.slice(2).toUpperCase().replaceAll('-', '_')}`);

function parse(argv: string[], env: Record<string, string> = {}) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const command = TABLE.addTo(new Command('t'))
      .exitOverride()
      .configureOutput({ writeErr: () => undefined });
    command.parse(argv, { from: 'user' });
    return TABLE.values(command);
  } finally {
    for (const k of Object.keys(env)) if (!(k in saved)) Reflect.deleteProperty(process.env, k);
  }
}

test('values: defaults, flags, variables (the flag wins), undefined when unset without default', () => {
  assert.deepEqual(parse([]), { port: 9443, name: undefined, verbose: false, logLevel: 'info' });
  const v = parse(['--port=80', '--verbose', '--log-level', 'debug'], { T_NAME: 'x', T_PORT: '81' });
  assert.deepEqual(v, { port: 80, name: 'x', verbose: true, logLevel: 'debug' });
  assert.equal(parse([], { T_VERBOSE: 'false' }).verbose, false);
  assert.equal(parse(['--verbose=false']).verbose, false);
  assert.equal(parse([], { T_LOG_LEVEL: 'debug' }).logLevel, 'info', 'env: false binds no variable');
});

test('a bad value or an unknown flag is a CommanderError saying why', () => {
  assert.throws(
    () => parse(['--port=70000']),
    (err: unknown) =>
      err instanceof CommanderError && /expected an integer from 0 to 65535, got "70000"/.test(err.message),
  );
  assert.throws(() => parse(['--nope']), CommanderError);
});

test('a key that is not the flag attribute name is refused', () => {
  assert.throws(
    () => optionsTable({ portNumber: flag({ flags: '--port <n>', help: '', parse: text }) }),
    /--port <n> sets "port", not its table key "portNumber"/,
  );
});

test('rows and Markdown: every long name, the variable (docsEnv over the rule), the docs', () => {
  assert.deepEqual(
    TABLE.rows().map((r) => [r.names, r.env]),
    [
      [['--port'], 'T_PORT'],
      [['--name'], 'T_NAME'],
      [['--verbose'], 'T_VERBOSE'],
      [['--zap-log-level', '--log-level'], 'LEVEL'],
    ],
  );
  assert.throws(() => flagsMarkdown(TABLE.rows()), /--port has no docs row/);
  assert.equal(
    flagsMarkdown(TABLE.rows().slice(1, 3)),
    '| flag | environment | default | meaning |\n| --- | --- | --- | --- |\n' +
      '| `--name` | `T_NAME` | none | a name |\n| `--verbose` | `T_VERBOSE` | off | talk more |\n',
  );
  const doc = 'a\n<!-- b -->\nold\n<!-- e -->\nz\n';
  assert.equal(
    withTable(doc, 'new\n', '<!-- b -->', '<!-- e -->'),
    'a\n<!-- b -->\n\nnew\n\n<!-- e -->\nz\n',
  );
  assert.throws(() => withTable('x', 't', '<!-- b -->', '<!-- e -->'), /lacks the markers/);
});

test('integer: exactly the integers in range; the refusal text is the caller’s when given', () => {
  fc.assert(
    fc.property(fc.integer({ min: -1000, max: 1000 }), (n) => {
      const ok = n >= 0 && n <= 100;
      if (ok) assert.equal(integer(0, 100)(String(n)), n);
      else assert.throws(() => integer(0, 100)(String(n)), /expected an integer from 0 to 100/);
    }),
  );
  for (const bad of ['1.5', 'x', '1e400']) assert.throws(() => integer(0)(bad));
  assert.throws(() => integer(1, 10, (v) => `--n must be ≥ 1, got ${v}`)('0'), /--n must be ≥ 1, got 0/);
});

test('bool: the usual spellings of true and false; anything else refused', () => {
  for (const t of ['true', '1', 'yes', 'ON ']) assert.equal(bool(t), true);
  for (const f of ['false', '0', 'no', 'off', '']) assert.equal(bool(f), false);
  assert.throws(() => bool('maybe'), /expected true or false, got "maybe"/);
});
