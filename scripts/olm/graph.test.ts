// Table tests of the upgrade graph: edges computed from release lists, and the checks
// that catch a graph OLM would refuse or that would strand an installed version.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Channel, Release } from '../../api/releases.ts';
import { channelEntries, checkGraph, checkReleases, skipRangeFor, type VersionedEntry } from './graph.ts';

const nameOf = (v: string): string => `op.v${v}`;
const rel = (version: string, channels: Channel[] = ['candidate', 'stable'], skips?: string[]): Release => ({
  version,
  channels,
  date: '2026-01-01',
  ...(skips ? { skips } : {}),
});
const versioned = (releases: Release[], channel: Channel): VersionedEntry[] =>
  channelEntries(releases, channel, nameOf).map((e) => ({ ...e, version: e.name.replace('op.v', '') }));

test('skipRangeFor covers the predecessor minor line up to the new version', () => {
  const cases: [string, string, string][] = [
    ['1.0.1', '1.0.0', '>=1.0.0 <1.0.1'],
    ['1.1.0', '1.0.3', '>=1.0.0 <1.1.0'],
    ['2.0.0', '1.4.2', '>=1.4.0 <2.0.0'],
    ['1.1.0', '1.1.0-rc.1', '>=1.1.0-0 <1.1.0'],
  ];
  for (const [version, previous, want] of cases) assert.equal(skipRangeFor(version, previous), want);
});

test('each release replaces its predecessor in the channel with a matching skipRange', () => {
  const releases = [rel('1.0.0'), rel('1.1.0-rc.1', ['candidate']), rel('1.1.0'), rel('1.1.1')];
  assert.deepEqual(channelEntries(releases, 'stable', nameOf), [
    { name: 'op.v1.0.0' },
    { name: 'op.v1.1.0', replaces: 'op.v1.0.0', skipRange: '>=1.0.0 <1.1.0' },
    { name: 'op.v1.1.1', replaces: 'op.v1.1.0', skipRange: '>=1.1.0 <1.1.1' },
  ]);
  assert.deepEqual(channelEntries(releases, 'candidate', nameOf), [
    { name: 'op.v1.0.0' },
    { name: 'op.v1.1.0-rc.1', replaces: 'op.v1.0.0', skipRange: '>=1.0.0 <1.1.0-rc.1' },
    { name: 'op.v1.1.0', replaces: 'op.v1.1.0-rc.1', skipRange: '>=1.1.0-0 <1.1.0' },
    { name: 'op.v1.1.1', replaces: 'op.v1.1.0', skipRange: '>=1.1.0 <1.1.1' },
  ]);
});

test('a skipped bad release is bypassed: replaced neither by name nor left stranded', () => {
  const releases = [rel('1.0.0'), rel('1.0.1'), rel('1.0.2', undefined, ['1.0.1'])];
  const entries = channelEntries(releases, 'stable', nameOf);
  assert.deepEqual(entries.at(-1), {
    name: 'op.v1.0.2',
    replaces: 'op.v1.0.0',
    skipRange: '>=1.0.0 <1.0.2',
    skips: ['op.v1.0.1'],
  });
  assert.deepEqual(checkGraph(versioned(releases, 'stable')), []);
});

test('generated graphs are sound in every channel, for many release histories', () => {
  const histories: Release[][] = [
    [rel('1.0.0')],
    [rel('0.1.0', ['candidate']), rel('0.2.0', ['candidate']), rel('1.0.0')],
    [
      rel('1.0.0'),
      rel('1.0.1'),
      rel('1.1.0-rc.1', ['candidate']),
      rel('1.1.0-rc.2', ['candidate']),
      rel('1.1.0'),
    ],
    [
      rel('1.0.0'),
      rel('1.0.1'),
      rel('1.0.2', undefined, ['1.0.1']),
      rel('2.0.0'),
      rel('2.1.0', ['candidate']),
    ],
  ];
  for (const releases of histories) {
    for (const channel of ['stable', 'candidate'] as const) {
      const entries = versioned(releases, channel);
      if (entries.length > 0)
        assert.deepEqual(checkGraph(entries), [], `${channel} of ${JSON.stringify(releases)}`);
    }
  }
});

test('checkGraph reports the defects OLM refuses or that strand users', () => {
  const e = (version: string, extra: Partial<VersionedEntry> = {}): VersionedEntry => ({
    name: nameOf(version),
    version,
    ...extra,
  });
  const cases: [string, VersionedEntry[], RegExp][] = [
    ['two heads', [e('1.0.0'), e('1.1.0', { skipRange: '>=1.0.0 <1.1.0' })], /expected one channel head/],
    [
      'stranded',
      [
        e('1.0.0'),
        e('1.0.1', { replaces: 'op.v1.0.0' }),
        e('1.0.2', { replaces: 'op.v1.0.1' }),
        e('1.1.0', { replaces: 'op.v1.0.0', skips: ['op.v1.0.2'] }),
      ],
      /op\.v1\.0\.1 is stranded/,
    ],
    [
      'replaces outside skipRange',
      [e('1.0.0'), e('1.1.0', { replaces: 'op.v1.0.0', skipRange: '>=1.0.5 <1.1.0' })],
      /outside its skipRange/,
    ],
    [
      'skipRange contains itself',
      [e('1.0.0'), e('1.1.0', { replaces: 'op.v1.0.0', skipRange: '>=1.0.0 <=1.1.0' })],
      /contains its own version/,
    ],
    ['replaces newer', [e('1.1.0'), e('1.0.0', { replaces: 'op.v1.1.0' })], /replaces newer/],
    [
      'no head (cycle)',
      [e('1.0.0', { replaces: 'op.v1.1.0' }), e('1.1.0', { replaces: 'op.v1.0.0' })],
      /none/,
    ],
    [
      'invalid range',
      [e('1.0.0'), e('1.1.0', { replaces: 'op.v1.0.0', skipRange: 'not-a-range' })],
      /invalid skipRange/,
    ],
  ];
  for (const [what, entries, want] of cases) {
    const problems = checkGraph(entries).join('; ');
    assert.match(problems, want, what);
  }
  const sideBranch = [
    e('1.0.0'),
    e('1.0.1', { replaces: 'op.v1.0.0' }),
    e('1.1.0', { replaces: 'op.v1.0.0', skips: ['op.v1.0.1'] }),
    e('1.0.2', { replaces: 'op.v1.0.0' }),
  ];
  assert.match(checkGraph(sideBranch).join('; '), /expected one channel head/);
});

test('checkReleases refuses bad declarations with the reason', () => {
  assert.throws(() => checkReleases([]), /declares no release/);
  assert.throws(() => checkReleases([rel('v1.0.0')]), /not a semver version/);
  assert.throws(() => checkReleases([rel('1.1.0'), rel('1.0.0')]), /oldest first/);
  assert.throws(() => checkReleases([rel('1.0.0'), rel('1.0.0')]), /oldest first/);
  assert.throws(() => checkReleases([rel('1.0.0', [])]), /in no channel/);
  assert.throws(
    () => checkReleases([rel('1.0.0'), rel('1.1.0', undefined, ['0.9.0'])]),
    /not an earlier release/,
  );
  assert.throws(() => checkReleases([{ ...rel('1.0.0'), date: '29.11.2026' }]), /YYYY-MM-DD/);
});
