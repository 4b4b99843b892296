// The shipped alerts under promtool, built from the same Prometheus module as the Prometheus
// the tests run: `promtool check rules` accepts deploy/monitoring/aiops-rules.yaml,
// `promtool test rules` passes deploy/monitoring/aiops-rules.test.yaml, which has for every
// alert a case where it fires and one where it stays silent, and a broken alert (a typo in a
// metric name, a syntax error) fails them.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fromYaml } from '../../lib/yaml.ts';
import { alertDefs } from '../../scripts/monitoring/alerts.ts';
import { jobName } from '../../scripts/monitoring/objects.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { promtool, promtoolPath, ROOT, skipUnlessPresent } from './tools.ts';

const skip = skipUnlessPresent(promtoolPath(), 'promtool');
const RULES = PATHS.rules;
const TESTS = RULES.replace(/\.yaml$/, '.test.yaml');

interface UnitTests {
  rule_files: string[];
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

test('promtool check rules accepts the generated rule file, every alert in it', { skip }, async () => {
  const r = await promtool(['check', 'rules', RULES]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`SUCCESS: ${alertDefs(jobName()).length} rules found`));
});

test('promtool test rules passes the alerts unit tests', { skip }, async () => {
  const r = await promtool(['test', 'rules', TESTS]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS/);
});

test('every alert has a unit test where it fires and one where it stays silent', () => {
  const unit = fromYaml(readFileSync(join(ROOT, TESTS), 'utf8')) as UnitTests;
  assert.deepEqual(unit.rule_files, ['aiops-rules.yaml']);
  const cases = unit.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const { alert } of alertDefs(jobName())) {
    const mine = cases.filter((c) => c.alertname === alert);
    assert.ok(
      mine.some((c) => c.exp_alerts.length > 0),
      `${alert} has a case where it fires`,
    );
    assert.ok(
      mine.some((c) => c.exp_alerts.length === 0),
      `${alert} has a case where it stays silent`,
    );
  }
});

/** A scratch copy of deploy/monitoring with `edit` applied to the rule file. */
function brokenCopy(edit: (rules: string) => string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-rules-'));
  cpSync(join(ROOT, 'deploy/monitoring'), dir, { recursive: true });
  const rules = join(dir, 'aiops-rules.yaml');
  const before = readFileSync(rules, 'utf8');
  const after = edit(before);
  assert.notEqual(after, before, 'the edit changed the rule file');
  writeFileSync(rules, after);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a typo in an alert metric fails promtool test rules, naming the alert', { skip }, async () => {
  const copy = brokenCopy((r) => r.replace('aiops_tasks_stalled{', 'aiops_task_stalled{'));
  try {
    const checked = await promtool(['check', 'rules', 'aiops-rules.yaml'], copy.dir);
    assert.equal(checked.code, 0, 'still valid PromQL');
    const r = await promtool(['test', 'rules', 'aiops-rules.test.yaml'], copy.dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /alertname: AIOpsTasksStalled/);
  } finally {
    copy.cleanup();
  }
});

test('a broken expression fails promtool check rules', { skip }, async () => {
  const copy = brokenCopy((r) => r.replace('absent(up{', 'absent(up{{'));
  try {
    const r = await promtool(['check', 'rules', 'aiops-rules.yaml'], copy.dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /FAILED/);
  } finally {
    copy.cleanup();
  }
});

test('promtool is built from the Prometheus module version the tests run', () => {
  const pinned = (tool: string): string | undefined =>
    /^require github\.com\/prometheus\/prometheus (\S+)$/m.exec(
      readFileSync(join(ROOT, 'test/harness/tools', tool, 'go.mod'), 'utf8'),
    )?.[1];
  assert.ok(pinned('prometheus'));
  assert.equal(pinned('promtool'), pinned('prometheus'));
});
