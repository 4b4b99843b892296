// The upgrade graph of each channel, computed from the declared releases with `semver`,
// and the checks OLM applies to it (one head, nothing stranded, no cycle) plus the ones
// that keep `replaces` and `skipRange` consistent. Pure: the generator and the tests share it.

import semver from 'semver';
import type { Channel, Release } from '../../api/releases.ts';

/** An `olm.channel` entry: a bundle and the edges into it. */
export interface ChannelEntry {
  readonly name: string;
  readonly replaces?: string;
  readonly skips?: readonly string[];
  readonly skipRange?: string;
}

/** Releases ordered oldest first; throws on a bad version, a duplicate or a wrong order. */
export function checkReleases(releases: readonly Release[]): readonly Release[] {
  if (releases.length === 0) throw new Error('api/releases.ts declares no release');
  releases.forEach((r, i) => {
    if (semver.valid(r.version) !== r.version) {
      throw new Error(`release ${JSON.stringify(r.version)} is not a semver version like 1.2.3`);
    }
    if (r.channels.length === 0) throw new Error(`release ${r.version} is in no channel`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(r.date)) throw new Error(`release ${r.version} date must be YYYY-MM-DD`);
    const prev = releases[i - 1];
    if (prev && !semver.gt(r.version, prev.version)) {
      throw new Error(`releases must be oldest first with no duplicate: ${prev.version} then ${r.version}`);
    }
    for (const s of r.skips ?? []) {
      if (!releases.slice(0, i).some((o) => o.version === s)) {
        throw new Error(`release ${r.version} skips ${s}, which is not an earlier release`);
      }
    }
  });
  return releases;
}

/**
 * The skipRange of `version` whose predecessor in the channel is `previous`: every version
 * from the start of the predecessor's minor line (including its pre-releases) up to, not
 * including, `version`. Bounded below, as OLM's docs advise.
 */
export function skipRangeFor(version: string, previous: string): string {
  const p = semver.parse(previous);
  if (!p) throw new Error(`not a semver version: ${previous}`);
  const lineStart = `${p.major}.${p.minor}.0`;
  const floor = semver.lt(previous, lineStart) ? `${lineStart}-0` : lineStart;
  return `>=${floor} <${version}`;
}

/**
 * The entries of `channel`, oldest first. Each release replaces its predecessor in the
 * channel and carries a skipRange over it; a declared skip is expressed by replacing the
 * newest release before it that is not skipped.
 */
export function channelEntries(
  releases: readonly Release[],
  channel: Channel,
  nameOf: (version: string) => string,
): ChannelEntry[] {
  const inChannel = checkReleases(releases).filter((r) => r.channels.includes(channel));
  const entries: ChannelEntry[] = [];
  inChannel.forEach((r, i) => {
    const skipped = new Set(r.skips ?? []);
    const earlier = inChannel.slice(0, i).filter((o) => !skipped.has(o.version));
    const previous = earlier.at(-1);
    const skips = (r.skips ?? []).filter((s) => inChannel.some((o) => o.version === s)).map(nameOf);
    entries.push({
      name: nameOf(r.version),
      ...(previous
        ? { replaces: nameOf(previous.version), skipRange: skipRangeFor(r.version, previous.version) }
        : {}),
      ...(skips.length > 0 ? { skips } : {}),
    });
  });
  return entries;
}

/** What `checkGraph` reads: the entries plus each entry's version. */
export interface VersionedEntry extends ChannelEntry {
  readonly version: string;
}

function canUpgrade(from: VersionedEntry, to: VersionedEntry): boolean {
  return (
    to.replaces === from.name ||
    (to.skips ?? []).includes(from.name) ||
    (to.skipRange !== undefined && semver.satisfies(from.version, to.skipRange, { includePrerelease: true }))
  );
}

/**
 * Problems of one channel's graph, empty when it is sound: exactly one head (by replaces
 * and skips, as `opm validate` computes it), no cycle, no stranded entry, every entry
 * reaches the head, each skipRange is valid, contains what its entry replaces and
 * nothing at or above its own version, and edges only go from older to newer versions.
 */
export function checkGraph(entries: readonly VersionedEntry[]): string[] {
  const problems: string[] = [];
  const byName = new Map(entries.map((e) => [e.name, e]));
  const replacedOrSkipped = new Set(
    entries.flatMap((e) => [...(e.replaces ? [e.replaces] : []), ...(e.skips ?? [])]),
  );
  const skipped = new Set(entries.flatMap((e) => e.skips ?? []));
  const heads = entries.filter((e) => !replacedOrSkipped.has(e.name));
  if (heads.length !== 1)
    problems.push(`expected one channel head, found ${heads.map((h) => h.name).join(', ') || 'none'}`);
  for (const e of entries) {
    if (e.skipRange !== undefined) {
      if (semver.validRange(e.skipRange) === null)
        problems.push(`${e.name}: invalid skipRange ${e.skipRange}`);
      else if (semver.satisfies(e.version, e.skipRange, { includePrerelease: true })) {
        problems.push(`${e.name}: skipRange ${e.skipRange} contains its own version`);
      }
    }
    const replaced = e.replaces !== undefined ? byName.get(e.replaces) : undefined;
    if (replaced) {
      if (!semver.lt(replaced.version, e.version)) problems.push(`${e.name} replaces newer ${replaced.name}`);
      if (
        e.skipRange !== undefined &&
        !semver.satisfies(replaced.version, e.skipRange, { includePrerelease: true })
      ) {
        problems.push(`${e.name}: replaces ${replaced.name}, outside its skipRange ${e.skipRange}`);
      }
    }
  }
  const head = heads.length === 1 ? heads[0] : undefined;
  if (head) {
    const chain = new Set<string>();
    for (
      let at: VersionedEntry | undefined = head;
      at;
      at = at.replaces ? byName.get(at.replaces) : undefined
    ) {
      if (chain.has(at.name)) {
        problems.push(`replaces cycle through ${at.name}`);
        break;
      }
      chain.add(at.name);
    }
    for (const e of entries) {
      if (!chain.has(e.name) && !skipped.has(e.name)) problems.push(`${e.name} is stranded`);
      if (!reaches(e, head, entries)) problems.push(`${e.name} cannot upgrade to the head ${head.name}`);
    }
  }
  return problems;
}

function reaches(from: VersionedEntry, head: VersionedEntry, entries: readonly VersionedEntry[]): boolean {
  const seen = new Set([from.name]);
  const queue = [from];
  for (let at = queue.shift(); at; at = queue.shift()) {
    if (at.name === head.name) return true;
    for (const next of entries) {
      if (!seen.has(next.name) && canUpgrade(at, next)) {
        seen.add(next.name);
        queue.push(next);
      }
    }
  }
  return false;
}
