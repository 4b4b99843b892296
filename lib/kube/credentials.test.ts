import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  execConfigOf,
  execTokenFresh,
  parseExecCredential,
  tokenFileDue,
  tokenFileOfUser,
  TOKEN_FILE_MAX_AGE_MS,
  type FileStamp,
} from './credentials.ts';

test('tokenFileDue: first read, any change of the file, or a minute since the last read', () => {
  const stamp: FileStamp = { ino: 7, size: 900, mtimeMs: 1000 };
  const last = { stamp, at: 10_000 };
  const cases: [string, Parameters<typeof tokenFileDue>[0], FileStamp, number, boolean][] = [
    ['never read', undefined, stamp, 10_000, true],
    ['unchanged, just read', last, stamp, 10_001, false],
    ['unchanged, 59.999 s later', last, stamp, 10_000 + TOKEN_FILE_MAX_AGE_MS - 1, false],
    ['unchanged, a minute later', last, stamp, 10_000 + TOKEN_FILE_MAX_AGE_MS, true],
    ['renamed over (new inode)', last, { ...stamp, ino: 8 }, 10_001, true],
    ['rewritten (size)', last, { ...stamp, size: 901 }, 10_001, true],
    ['rewritten (mtime)', last, { ...stamp, mtimeMs: 1001 }, 10_001, true],
  ];
  for (const [name, l, s, now, want] of cases) assert.equal(tokenFileDue(l, s, now), want, name);
});

test('execConfigOf: the kubeconfig exec entry, checked', () => {
  assert.equal(execConfigOf(undefined), undefined);
  assert.equal(execConfigOf(null), undefined);
  assert.deepEqual(execConfigOf({ command: 'aws', args: ['eks', 'get-token'], apiVersion: 'v1beta1' }), {
    command: 'aws',
    args: ['eks', 'get-token'],
    env: [],
    apiVersion: 'v1beta1',
  });
  assert.deepEqual(execConfigOf({ command: 'x', env: [{ name: 'A', value: 'b' }] }), {
    command: 'x',
    args: [],
    env: [{ name: 'A', value: 'b' }],
    apiVersion: 'client.authentication.k8s.io/v1',
  });
  for (const bad of [
    {},
    { command: '' },
    { command: 'x', args: [1] },
    { command: 'x', env: [{ name: 'A' }] },
    'x',
  ])
    assert.throws(() => execConfigOf(bad), JSON.stringify(bad));
});

test('parseExecCredential: the token and its expiry; no token is an error', () => {
  const cred = (status: unknown): string => JSON.stringify({ kind: 'ExecCredential', status });
  assert.deepEqual(parseExecCredential(cred({ token: 't' })), { token: 't' });
  assert.deepEqual(parseExecCredential(cred({ token: 't', expirationTimestamp: '2026-01-01T00:00:00Z' })), {
    token: 't',
    expiresAt: Date.parse('2026-01-01T00:00:00Z'),
  });
  assert.deepEqual(parseExecCredential(cred({ token: 't', expirationTimestamp: 'soon' })), { token: 't' });
  for (const bad of ['not json', cred({}), cred({ token: '' }), cred({ clientCertificateData: 'x' }), 'null'])
    assert.throws(() => parseExecCredential(bad), bad);
});

test('execTokenFresh: until the expiry passes; without one, until invalidated', () => {
  assert.equal(execTokenFresh(undefined, 0), false);
  assert.equal(execTokenFresh({ token: 't' }, Number.MAX_SAFE_INTEGER), true);
  assert.equal(execTokenFresh({ token: 't', expiresAt: 1000 }, 999), true);
  assert.equal(execTokenFresh({ token: 't', expiresAt: 1000 }, 1000), false);
});

test('tokenFileOfUser: the named user’s tokenFile only', () => {
  const doc = {
    users: [
      { name: 'a', user: { token: 'x' } },
      { name: 'b', user: { tokenFile: '/var/run/token' } },
      { name: 'c', user: { tokenFile: '' } },
    ],
  };
  assert.equal(tokenFileOfUser(doc, 'b'), '/var/run/token');
  assert.equal(tokenFileOfUser(doc, 'a'), undefined);
  assert.equal(tokenFileOfUser(doc, 'c'), undefined);
  assert.equal(tokenFileOfUser(doc, 'missing'), undefined);
  assert.equal(tokenFileOfUser({ users: 'x' }, 'b'), undefined);
  assert.equal(tokenFileOfUser(undefined, 'b'), undefined);
});
