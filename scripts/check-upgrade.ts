// `npm run check-upgrade [-- --candidate CRD.yaml]`: walks the declared release CRDs
// (api/upgrade/crd-releases.ts) pairwise through the upgrade-safety rules and fails, naming
// the path and the rule, on anything OLM would refuse or that would lose data. With
// `--candidate`, also checks a proposed next CRD against the newest release, before it is
// declared or shipped. Findings a release declares as intended are printed, not counted.
// Exit 0 safe, 1 unsafe, 2 usage.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CustomResourceDefinition } from '../api/crd.ts';
import {
  CRD_RELEASES,
  crdOfRelease,
  acceptanceOf,
  maybeStoredAt,
  type CRDRelease,
} from '../api/upgrade/crd-releases.ts';
import { checkUpgrade, RULES } from '../api/upgrade/safety.ts';
import { fromYaml } from '../lib/yaml.ts';

const USAGE = 'usage: npm run check-upgrade [-- --candidate <next CRD .yaml>]\n';
let candidatePath: string | undefined;
try {
  candidatePath = parseArgs({ options: { candidate: { type: 'string' } }, strict: true }).values.candidate;
} catch (err) {
  process.stderr.write(`check-upgrade: ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}

const conversion = { service: { namespace: 'aiops-system', name: 'aiops-webhook-service' } };

/** Prints the findings of one step; returns how many are not declared as intended. */
function step(
  label: string,
  from: CustomResourceDefinition,
  to: CustomResourceDefinition,
  stored: readonly string[],
  release?: CRDRelease,
): number {
  const findings = checkUpgrade(from, to, stored);
  const unsafe = findings.filter((f) => release === undefined || acceptanceOf(release, f) === undefined);
  process.stdout.write(
    `${label} (may be stored: ${stored.join(', ')}): ${unsafe.length === 0 ? 'safe' : 'UNSAFE'}\n`,
  );
  for (const f of findings) {
    const accepted = release && acceptanceOf(release, f);
    process.stdout.write(
      `  ${accepted ? 'intended: ' : ''}${f.version}${f.path}: ${RULES[f.rule]} (${f.rule}): ${f.detail}\n`,
    );
    if (accepted) process.stdout.write(`    why: ${accepted.why}\n`);
  }
  return unsafe.length;
}

let unsafe = 0;
for (let i = 1; i < CRD_RELEASES.length; i++) {
  const from = CRD_RELEASES[i - 1];
  const to = CRD_RELEASES[i];
  if (from === undefined || to === undefined) continue;
  const stored = to.requiresMigration ? [from.storage] : maybeStoredAt(CRD_RELEASES, i - 1);
  unsafe += step(
    `${from.version} → ${to.version}`,
    crdOfRelease(from, conversion),
    crdOfRelease(to, conversion),
    stored,
    to,
  );
}
const newest = CRD_RELEASES.at(-1);
if (candidatePath !== undefined && newest !== undefined) {
  let candidate: CustomResourceDefinition;
  try {
    const parsed = fromYaml(readFileSync(candidatePath, 'utf8')) as { kind?: unknown } | null;
    if (parsed?.kind !== 'CustomResourceDefinition') throw new Error('not a CustomResourceDefinition');
    candidate = parsed as CustomResourceDefinition;
  } catch (err) {
    process.stderr.write(`check-upgrade: cannot read ${candidatePath}: ${(err as Error).message}\n`);
    process.exit(2);
  }
  unsafe += step(
    `${newest.version} → candidate ${candidatePath}`,
    crdOfRelease(newest, conversion),
    candidate,
    maybeStoredAt(CRD_RELEASES, CRD_RELEASES.length - 1),
  );
}
process.exit(unsafe === 0 ? 0 : 1);
