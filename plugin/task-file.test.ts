import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { taskFromFile } from './task-file.ts';

const sample = (name: string): string =>
  readFileSync(new URL(`../config/samples/${name}`, import.meta.url), 'utf8');

test('taskFromFile: the samples at every version, read at v2', () => {
  const v2 = taskFromFile(sample('aitask-v2.yaml'), 'aitask-v2.yaml');
  assert.equal(v2.apiVersion, 'aiops.example.com/v2');
  assert.equal(v2.spec.trigger.threshold, 0.8);
  const v1 = taskFromFile(sample('aitask-v1.yaml'), 'aitask-v1.yaml');
  assert.equal(v1.apiVersion, 'aiops.example.com/v2');
  assert.equal(v1.spec.target.name, 'api');
  assert.equal(v1.spec.remediation.action, 'Noop');
  assert.equal(v1.spec.intervalSeconds, 30);
  const old = taskFromFile(sample('aitask-v1alpha1.yaml'), 'aitask-v1alpha1.yaml');
  assert.equal(old.apiVersion, 'aiops.example.com/v2');
  const json = taskFromFile(JSON.stringify({ ...v2, status: { phase: 'Healing' } }), 'task.json');
  assert.equal(json.status, undefined, 'a status in the file is not read');
});

test('taskFromFile: refused as the apiserver would, with the field path', () => {
  const v2 = sample('aitask-v2.yaml');
  const table: [string, RegExp][] = [
    [
      v2.replace('threshold: 0.8', 'threshold: high'),
      /is not a valid AITask at v2: spec\.trigger\.threshold: /,
    ],
    [v2.replace('action: ScaleUp', 'action: Reboot'), /spec\.remediation\.action: /],
    [
      v2.replace('maxAttempts: 3', 'maxAttempts: 3\n    retries: 2'),
      /spec\.remediation\.retries: not declared/,
    ],
    [v2.replace('intervalSeconds: 10', 'intervalSeconds: 1'), /spec\.intervalSeconds: /],
    [
      v2.replace(
        '{ step: 1, minReplicas: 1, maxReplicas: 4 }',
        '{ step: 1, minReplicas: 5, maxReplicas: 4 }',
      ),
      /spec\.remediation\.scale: /,
    ],
    [
      v2.replace('aiops.example.com/v2', 'aiops.example.com/v9'),
      /unsupported apiVersion "aiops\.example\.com\/v9"/,
    ],
    [v2.replace('kind: AITask', 'kind: Deployment'), /is a Deployment: give one AITask/],
    ['spec: [', /is not YAML: /],
    ['- a\n- b\n', /holds no object/],
    ['apiVersion: aiops.example.com/v2\nkind: AITask\nmetadata: { name: x }\n', /spec: required/],
  ];
  for (const [text, want] of table)
    assert.throws(
      () => taskFromFile(text, 'task.yaml'),
      (err: Error) => err.name === 'CliError' && want.test(err.message),
      want.source,
    );
});
