import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { redactUrl, redactUrls } from './redact.ts';

test('redactUrl: table', () => {
  const cases: [string, string][] = [
    ['http://prometheus:9090', 'http://prometheus:9090'],
    ['http://user:pass@prometheus:9090/prom', 'http://***@prometheus:9090/prom'],
    ['https://token@h/api?x=1', 'https://***@h/api?***'],
    ['http://h/p?access_token=s3cret#frag', 'http://h/p?***#***'],
    ['http://:pw@h', 'http://***@h'],
    ['not a url user:pass@h', 'not a url user:pass@h'],
    ['http://us er:pa ss@h', 'http://***@h'],
  ];
  for (const [url, want] of cases) assert.equal(redactUrl(url), want, url);
});

test('redactUrls: every URL in a message, the rest untouched', () => {
  assert.equal(
    redactUrls('connect ECONNREFUSED http://a:b@10.0.0.1:9090/api/v1/query?query=up and "https://x/y?k=v"'),
    'connect ECONNREFUSED http://***@10.0.0.1:9090/api/v1/query?*** and "https://x/y?***',
  );
  assert.equal(redactUrls('no url here: a@b'), 'no url here: a@b');
  assert.equal(redactUrls("'http://u:p@w@h/x'"), "'http://***@h/x'", 'userinfo up to the last @');
});

test('redactUrl (property): the password and query of any URL never survive', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9]{6,20}$/).map((s) => `S3${s}`);
  fc.assert(
    fc.property(secret, secret, fc.webUrl(), (user, pass, base) => {
      const u = new URL(base);
      u.username = user;
      u.password = pass;
      u.search = `token=${pass}`;
      const out = redactUrl(u.toString());
      assert.ok(!out.includes(pass), out);
      assert.ok(!out.includes(user), out);
      assert.ok(!redactUrls(`failed: ${u.toString()} down`).includes(pass));
    }),
    { seed: 21 },
  );
});
