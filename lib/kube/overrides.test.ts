import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Cluster, User } from '@kubernetes/client-node';
import {
  applyOverrides,
  FLAGS_ENTRY,
  hasOverrides,
  OverrideError,
  serverUrl,
  type ConnectionOverrides,
  type KubeconfigEntries,
} from './overrides.ts';

const prod: Cluster = {
  name: 'prod',
  server: 'https://prod:6443',
  caData: 'UFJPRA==',
  tlsServerName: 'prod.internal',
  skipTLSVerify: false,
};
const staging: Cluster = {
  name: 'staging',
  server: 'https://staging:6443',
  caFile: '/ca/staging',
  skipTLSVerify: false,
};
const admin: User = { name: 'admin', certData: 'Q0VSVA==', keyData: 'S0VZ' };
const oidc: User = { name: 'oidc', exec: { command: 'get-token' }, impersonateUser: 'kc-as' };
const kc: KubeconfigEntries = {
  clusters: [prod, staging],
  users: [admin, oidc],
  context: { name: 'ctx', cluster: 'prod', user: 'admin', namespace: 'team' },
};

void test('no flag: the context entries as loaded, no headers', () => {
  const e = applyOverrides(kc, {});
  assert.deepEqual(e.cluster, prod);
  assert.deepEqual(e.user, admin);
  assert.deepEqual(e.headers, {});
  assert.equal(e.staticToken, false);
  assert.equal(hasOverrides({}), false);
  assert.equal(hasOverrides({ token: '' }), false);
  assert.equal(hasOverrides({ asGroups: ['g'] }), true);
  assert.equal(hasOverrides({ insecureSkipTlsVerify: true }), true);
});

void test('precedence: each flag overrides its field of the picked entries, as client-go does', () => {
  const cases: [string, ConnectionOverrides, Partial<Cluster>, Partial<User>][] = [
    ['--cluster picks another entry', { cluster: 'staging' }, staging, admin],
    ['--user picks another entry', { user: 'oidc' }, prod, { name: 'oidc', exec: { command: 'get-token' } }],
    [
      '--server replaces the URL and clears the kubeconfig tls-server-name',
      { server: 'https://other:443' },
      { name: 'prod', server: 'https://other:443', caData: 'UFJPRA==', skipTLSVerify: false },
      admin,
    ],
    [
      '--server without a scheme is https',
      { server: '10.0.0.1:6443', tlsServerName: 'api' },
      {
        name: 'prod',
        server: 'https://10.0.0.1:6443',
        caData: 'UFJPRA==',
        tlsServerName: 'api',
        skipTLSVerify: false,
      },
      admin,
    ],
    [
      '--certificate-authority replaces CA data and file',
      { cluster: 'staging', certificateAuthority: '/my/ca' },
      { name: 'staging', server: 'https://staging:6443', caFile: '/my/ca', skipTLSVerify: false },
      admin,
    ],
    [
      '--insecure-skip-tls-verify clears the CA',
      { insecureSkipTlsVerify: true },
      { name: 'prod', server: 'https://prod:6443', tlsServerName: 'prod.internal', skipTLSVerify: true },
      admin,
    ],
    [
      '--token wins over exec and is kept beside the client certificate',
      { user: 'oidc', token: 't0k' },
      prod,
      { name: 'oidc', token: 't0k' },
    ],
    ['--token beside a client certificate', { token: 't0k' }, prod, { ...admin, token: 't0k' }],
    [
      '--client-certificate and --client-key replace the data',
      { clientCertificate: '/c.crt', clientKey: '/c.key' },
      prod,
      { name: 'admin', certFile: '/c.crt', keyFile: '/c.key' },
    ],
  ];
  for (const [what, o, cluster, user] of cases) {
    const e = applyOverrides(kc, o);
    assert.deepEqual(e.cluster, cluster, what);
    assert.deepEqual(e.user, user, what);
    assert.equal(e.staticToken, o.token !== undefined, what);
  }
});

void test('impersonation: flags over the kubeconfig `as`, groups repeat, a UID', () => {
  const cases: [ConnectionOverrides, Record<string, string | string[]>][] = [
    [{ as: 'system:serviceaccount:ns:sa' }, { 'Impersonate-User': 'system:serviceaccount:ns:sa' }],
    [
      { as: 'jane', asGroups: ['dev', 'ops'], asUid: '42' },
      { 'Impersonate-User': 'jane', 'Impersonate-Group': ['dev', 'ops'], 'Impersonate-Uid': '42' },
    ],
    [{ user: 'oidc' }, { 'Impersonate-User': 'kc-as' }],
    [{ user: 'oidc', as: 'flag-as' }, { 'Impersonate-User': 'flag-as' }],
    [
      { user: 'oidc', asGroups: ['g'] },
      { 'Impersonate-User': 'kc-as', 'Impersonate-Group': ['g'] },
    ],
  ];
  for (const [o, headers] of cases) {
    const e = applyOverrides(kc, o);
    assert.deepEqual(e.headers, headers, JSON.stringify(o));
    assert.equal(e.user.impersonateUser, undefined);
  }
});

void test('refusals name the flag', () => {
  const cases: [KubeconfigEntries, ConnectionOverrides, RegExp][] = [
    [kc, { cluster: 'nope' }, /cluster "nope" does not exist/],
    [kc, { user: 'nope' }, /user "nope" does not exist/],
    [kc, { asGroups: ['g'] }, /--as-group and --as-uid need --as/],
    [kc, { asUid: '1' }, /need --as/],
    [{ clusters: [], users: [], context: undefined }, { token: 'x' }, /no current cluster/],
  ];
  for (const [entries, o, message] of cases)
    assert.throws(
      () => applyOverrides(entries, o),
      (e: unknown) => e instanceof OverrideError && message.test(e.message),
    );
});

void test('flags alone make a connection without any kubeconfig entry', () => {
  const e = applyOverrides(
    { clusters: [], users: [], context: undefined },
    { server: 'https://api:6443', token: 'abc', certificateAuthority: '/ca.crt' },
  );
  assert.deepEqual(e.cluster, {
    name: FLAGS_ENTRY,
    server: 'https://api:6443',
    caFile: '/ca.crt',
    skipTLSVerify: false,
  });
  assert.deepEqual(e.user, { name: FLAGS_ENTRY, token: 'abc' });
  assert.equal(serverUrl('http://x'), 'http://x');
  assert.equal(serverUrl('x:1'), 'https://x:1');
});
