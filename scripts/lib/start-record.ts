// What a running `npm start` tells `npm run cluster -- env`: the loopback URL of the
// Prometheus it holds, so the README's `eval "$(npm run -s cluster -- env)"` also sets
// AIOPS_PROMETHEUS_URL and `kubectl aiops simulate` needs no flag, dialing only loopback. The
// record is a file in the cluster dir (`npm run cluster -- down` removes it with the dir);
// npm start removes its own on exit, and a record whose npm start is gone is ignored.
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** The record's file name inside the cluster dir. */
export const START_RECORD_FILE = 'npm-start.json';

/** What npm start records: its pid and its Prometheus' URL (http://127.0.0.1:PORT). */
export interface StartRecord {
  readonly pid: number;
  readonly prometheusUrl: string;
}

/** Only a loopback http URL with a port is printed: the line is eval'd by a shell. */
const LOOPBACK_URL = /^http:\/\/127\.0\.0\.1:[0-9]{1,5}$/;

/** The record in `text`, or undefined when it is not one (malformed, or a URL not on loopback). Pure. */
export function parseStartRecord(text: string): StartRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { pid, prometheusUrl } = (value ?? {}) as { pid?: unknown; prometheusUrl?: unknown };
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (typeof prometheusUrl !== 'string' || !LOOPBACK_URL.test(prometheusUrl)) return undefined;
  return { pid, prometheusUrl };
}

/** The shell line `cluster env` prints for `record`. Pure. */
export const prometheusEnvLine = (record: StartRecord): string =>
  `export AIOPS_PROMETHEUS_URL=${record.prometheusUrl}`;

/** Writes this process's record into cluster dir `dir` (replacing any other). */
export function writeStartRecord(dir: string, prometheusUrl: string): void {
  const record: StartRecord = { pid: process.pid, prometheusUrl };
  writeFileSync(join(dir, START_RECORD_FILE), JSON.stringify(record) + '\n');
}

/** Removes the record of `dir` if it is this process's (another npm start may have replaced it). */
export async function removeStartRecord(dir: string): Promise<void> {
  const path = join(dir, START_RECORD_FILE);
  const text = await readFile(path, 'utf8').catch(() => '');
  if (parseStartRecord(text)?.pid === process.pid) await rm(path, { force: true });
}

/** Whether `pid` runs npm start (scripts/local.ts), read from /proc. */
function runsNpmStart(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .some((a) => a.endsWith('scripts/local.ts'));
  } catch {
    return false;
  }
}

/** The record of cluster dir `dir` while its npm start runs; undefined otherwise. */
export function readStartRecord(dir: string): StartRecord | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, START_RECORD_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const record = parseStartRecord(text);
  return record !== undefined && runsNpmStart(record.pid) ? record : undefined;
}
