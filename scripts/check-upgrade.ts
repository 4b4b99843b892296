// `npm run check-upgrade`: walks the declared release CRDs (api/upgrade/crd-releases.ts)
// pairwise through the upgrade-safety rules and fails, naming the path and the rule, on
// anything OLM would refuse or that would lose data. Exit 0 safe, 1 unsafe.

import { CRD_RELEASES, crdOfRelease, maybeStoredAt } from '../api/upgrade/crd-releases.ts';
import { checkUpgrade, RULES } from '../api/upgrade/safety.ts';

const conversion = { service: { namespace: 'aiops-system', name: 'aiops-webhook-service' } };
let unsafe = 0;
for (let i = 1; i < CRD_RELEASES.length; i++) {
  const from = CRD_RELEASES[i - 1];
  const to = CRD_RELEASES[i];
  if (from === undefined || to === undefined) continue;
  const stored = to.requiresMigration ? [from.storage] : maybeStoredAt(CRD_RELEASES, i - 1);
  const findings = checkUpgrade(crdOfRelease(from, conversion), crdOfRelease(to, conversion), stored);
  process.stdout.write(
    `${from.version} → ${to.version} (may be stored: ${stored.join(', ')}): ${findings.length === 0 ? 'safe' : 'UNSAFE'}\n`,
  );
  for (const f of findings)
    process.stdout.write(`  ${f.version}${f.path}: ${RULES[f.rule]} (${f.rule}): ${f.detail}\n`);
  unsafe += findings.length;
}
process.exit(unsafe === 0 ? 0 : 1);
