// npm start's record for `cluster env`: only a loopback http URL with a port is ever printed
// (the line is eval'd), a record whose npm start is gone is ignored, and npm start removes
// only its own. Real files in a temp dir; this process stands in for npm start's pid.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  parseStartRecord,
  prometheusEnvLine,
  readStartRecord,
  removeStartRecord,
  START_RECORD_FILE,
  writeStartRecord,
} from './start-record.ts';

test('parseStartRecord: a pid and a loopback http URL, nothing else', () => {
  const ok = { pid: 42, prometheusUrl: 'http://127.0.0.1:9090' };
  assert.deepEqual(parseStartRecord(JSON.stringify(ok)), ok);
  assert.equal(prometheusEnvLine(ok), 'export AIOPS_PROMETHEUS_URL=http://127.0.0.1:9090');
  for (const bad of [
    '',
    'not json',
    'null',
    JSON.stringify({ pid: 42 }),
    JSON.stringify({ ...ok, pid: 0 }),
    JSON.stringify({ ...ok, pid: '42' }),
    JSON.stringify({ ...ok, prometheusUrl: 'http://10.0.0.5:9090' }),
    JSON.stringify({ ...ok, prometheusUrl: 'http://127.0.0.1:9090/$(rm -rf ~)' }),
    JSON.stringify({ ...ok, prometheusUrl: 'http://127.0.0.1:9090; echo' }),
    JSON.stringify({ ...ok, prometheusUrl: 'https://127.0.0.1:9090' }),
    JSON.stringify({ ...ok, prometheusUrl: 'http://127.0.0.1' }),
  ])
    assert.equal(parseStartRecord(bad), undefined, bad);
});

test('the record is read while its npm start runs, and removed only by it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-start-record-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(readStartRecord(dir), undefined, 'none written');
  writeStartRecord(dir, 'http://127.0.0.1:9090');
  assert.equal(readStartRecord(dir), undefined, 'this test process is not npm start: ignored');
  await removeStartRecord(dir);
  assert.equal(existsSync(join(dir, START_RECORD_FILE)), false, 'its own record removed');
  const other = JSON.stringify({ pid: process.pid + 1, prometheusUrl: 'http://127.0.0.1:9090' });
  writeFileSync(join(dir, START_RECORD_FILE), other);
  await removeStartRecord(dir);
  assert.equal(existsSync(join(dir, START_RECORD_FILE)), true, "another npm start's record stays");
});
