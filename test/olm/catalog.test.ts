// OLM's catalog tool on the generated file-based catalog: `opm validate` accepts it, the
// catalog's olm.bundle entry is exactly what `opm render` makes of bundle/, every channel's
// upgrade graph is sound (one head, nothing stranded, every bundle reaches the head,
// replaces inside skipRange), and opm refuses the graph defects the generator avoids.

import { CRD_RELEASES } from '../../api/upgrade/crd-releases.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadAll, dump } from 'js-yaml';
import { bundleImage, csvName, DEFAULT_CHANNEL, RELEASES, type Release } from '../../api/releases.ts';
import { checkGraph, type ChannelEntry } from '../../scripts/olm/graph.ts';
import { bundleBlobPath, PATHS, renderRelease } from '../../scripts/olm/render.ts';
import { ROOT, run, skipUnless } from './validators.ts';

const skip = skipUnless('opm');

interface Blob {
  schema: string;
  name: string;
  [key: string]: unknown;
}

const blobs = (text: string): Blob[] => loadAll(text) as Blob[];
const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-fbc-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function writeCatalog(dir: string, files: ReadonlyMap<string, string>): void {
  for (const [rel, content] of files) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

/**
 * The catalog files of a whole release history, each bundle rendered when it was current;
 * every hypothetical release ships the current CRD.
 */
function historyCatalog(releases: readonly Release[]): Map<string, string> {
  const files = new Map<string, string>();
  const newest = CRD_RELEASES.at(-1);
  assert.ok(newest);
  const crds = releases.map((r) => ({ ...newest, version: r.version }));
  releases.forEach((r, i) => {
    const rendered = renderRelease(r.version, releases.slice(0, i + 1), crds);
    const path = bundleBlobPath(r.version);
    files.set(path.slice(PATHS.catalog.length + 1), rendered.get(path) ?? '');
    if (i === releases.length - 1) {
      files.set('package.yaml', rendered.get(`${PATHS.catalog}/package.yaml`) ?? '');
    }
  });
  return files;
}

/** Entries of every channel in a catalog, each with its bundle's version. */
function channels(all: Blob[]): Map<string, (ChannelEntry & { version: string })[]> {
  const versionOf = new Map<string, string>();
  for (const b of all.filter((x) => x.schema === 'olm.bundle')) {
    const props = b['properties'] as { type: string; value: { version?: string } }[];
    const version = props.find((p) => p.type === 'olm.package')?.value.version;
    assert.ok(version, `${b.name} has an olm.package version`);
    versionOf.set(b.name, version);
  }
  const out = new Map<string, (ChannelEntry & { version: string })[]>();
  for (const c of all.filter((x) => x.schema === 'olm.channel')) {
    const entries = (c['entries'] as ChannelEntry[]).map((e) => {
      const version = versionOf.get(e.name);
      assert.ok(version, `channel ${c.name} entry ${e.name} has an olm.bundle`);
      return { ...e, version };
    });
    out.set(c.name, entries);
  }
  return out;
}

function committedCatalog(): Blob[] {
  return [
    ...blobs(read(`${PATHS.catalog}/package.yaml`)),
    ...RELEASES.flatMap((r) => blobs(read(bundleBlobPath(r.version)))),
  ];
}

test('opm validate accepts the generated catalog', { skip }, async () => {
  const r = await run('opm', ['validate', 'bundle/catalog']);
  assert.equal(r.code, 0, r.stderr);
});

test("the catalog's olm.bundle entry is what opm renders from bundle/", { skip }, async () => {
  const version = RELEASES.at(-1)?.version ?? '';
  const rendered = await run('opm', ['render', './bundle', '-o', 'yaml']);
  assert.equal(rendered.code, 0, rendered.stderr);
  const [fromBundle] = blobs(rendered.stdout).filter((b) => b.schema === 'olm.bundle');
  assert.ok(fromBundle);
  // A bundle directory has no image of its own; the catalog names the bundle image, and
  // with an image opm replaces the embedded objects by olm.csv.metadata.
  fromBundle['image'] = bundleImage(version);
  const scratch = tempDir();
  try {
    writeFileSync(join(scratch.dir, 'package.yaml'), read(`${PATHS.catalog}/package.yaml`));
    writeFileSync(join(scratch.dir, 'bundle.yaml'), dump(fromBundle));
    const migrated = await run('opm', [
      'render',
      scratch.dir,
      '--migrate-level',
      'bundle-object-to-csv-metadata',
      '-o',
      'yaml',
    ]);
    assert.equal(migrated.code, 0, migrated.stderr);
    const expected = blobs(migrated.stdout).find((b) => b.schema === 'olm.bundle');
    const [committed] = blobs(read(bundleBlobPath(version)));
    assert.deepEqual(committed, expected);
  } finally {
    scratch.cleanup();
  }
});

test('every channel of the committed catalog has a sound upgrade graph', () => {
  const all = committedCatalog();
  const byChannel = channels(all);
  assert.deepEqual([...byChannel.keys()].sort(), ['candidate', 'stable']);
  const pkg = all.find((b) => b.schema === 'olm.package');
  assert.equal(pkg?.['defaultChannel'], DEFAULT_CHANNEL);
  for (const [name, entries] of byChannel) assert.deepEqual(checkGraph(entries), [], `channel ${name}`);
  for (const r of RELEASES) {
    for (const c of r.channels) {
      assert.ok(
        byChannel.get(c)?.some((e) => e.name === csvName(r.version)),
        `${r.version} is in ${c}`,
      );
    }
  }
});

test("the CSV's replaces and skipRange are the default channel's edges into it", () => {
  const head = RELEASES.at(-1);
  assert.ok(head);
  const entry = channels(committedCatalog())
    .get(DEFAULT_CHANNEL)
    ?.find((e) => e.name === csvName(head.version));
  assert.ok(entry);
  const [csv] = blobs(read(`${PATHS.manifests}/aiops-operator.clusterserviceversion.yaml`)) as unknown as {
    metadata: { annotations: Record<string, string> };
    spec: { replaces?: string };
  }[];
  assert.ok(csv);
  assert.equal(csv.spec.replaces, entry.replaces);
  assert.equal(csv.metadata.annotations['olm.skipRange'], entry.skipRange);
});

const rel = (
  version: string,
  channels: Release['channels'] = ['candidate', 'stable'],
  skips?: string[],
): Release => ({
  version,
  channels,
  date: '2026-01-01',
  ...(skips ? { skips } : {}),
});
const histories: Release[][] = [
  [rel('1.0.0'), rel('1.0.1'), rel('1.1.0-rc.1', ['candidate']), rel('1.1.0')],
  [
    rel('1.0.0'),
    rel('1.0.1'),
    rel('1.0.2', undefined, ['1.0.1']),
    rel('2.0.0-rc.1', ['candidate']),
    rel('2.0.0'),
  ],
];

test(
  'opm validate accepts generated multi-release catalogs, and their graphs are sound',
  { skip },
  async () => {
    for (const history of histories) {
      const files = historyCatalog(history);
      const scratch = tempDir();
      try {
        writeCatalog(scratch.dir, files);
        const r = await run('opm', ['validate', scratch.dir]);
        assert.equal(r.code, 0, `${history.map((h) => h.version).join(', ')}: ${r.stderr}`);
        const all = [...files.values()].flatMap(blobs);
        for (const [name, entries] of channels(all)) assert.deepEqual(checkGraph(entries), [], name);
      } finally {
        scratch.cleanup();
      }
    }
  },
);

/** Rewrites the channel blobs of a catalog's package.yaml. */
function withChannels(files: Map<string, string>, edit: (all: Blob[]) => Blob[]): Map<string, string> {
  const out = new Map(files);
  out.set(
    'package.yaml',
    edit(blobs(files.get('package.yaml') ?? ''))
      .map((b) => dump(b))
      .join('---\n'),
  );
  return out;
}

const graphDefects: readonly [string, (all: Blob[]) => Blob[], RegExp][] = [
  [
    'the head lost its replaces (two heads)',
    (all) =>
      all.map((b) =>
        b.schema === 'olm.channel' && b.name === 'stable'
          ? {
              ...b,
              entries: (b['entries'] as ChannelEntry[]).map((e, i, a) =>
                i === a.length - 1 ? { name: e.name } : e,
              ),
            }
          : b,
      ),
    /multiple channel heads/,
  ],
  [
    'a default channel that does not exist',
    (all) => all.map((b) => (b.schema === 'olm.package' ? { ...b, defaultChannel: 'fast' } : b)),
    /invalid channel .{0,2}fast[^]*channel must contain at least one bundle/,
  ],
  [
    'a side branch leaves a bundle stranded',
    (all) =>
      all.map((b) =>
        b.schema === 'olm.channel' && b.name === 'candidate'
          ? {
              ...b,
              entries: (b['entries'] as ChannelEntry[]).map((e) =>
                e.name === csvName('1.1.0')
                  ? { ...e, replaces: csvName('1.0.0'), skips: [csvName('1.1.0-rc.1')] }
                  : e,
              ),
            }
          : b,
      ),
    /stranded/,
  ],
];

for (const [what, edit, expected] of graphDefects) {
  test(`opm validate refuses a seeded graph defect: ${what}`, { skip }, async () => {
    const [history] = histories;
    assert.ok(history);
    const scratch = tempDir();
    try {
      writeCatalog(scratch.dir, withChannels(historyCatalog(history), edit));
      const r = await run('opm', ['validate', scratch.dir]);
      assert.notEqual(r.code, 0, `opm accepted ${what}`);
      assert.match(r.stderr + r.stdout, expected);
    } finally {
      scratch.cleanup();
    }
  });
}
