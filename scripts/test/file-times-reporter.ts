// A node:test reporter beside the spec one: `npm test` runs its files in `node --test`
// processes, and only the runner sees when each file started and ended (stage startup in a
// `before` hook included). It writes one JSON line per test file, {file, ms, passed}, from the
// runner's own file-level `test:complete` event, so `npm test` can name the slowest files
// without timing anything itself.

import { resolve } from 'node:path';
import type { TestEvent } from 'node:test/reporters';
import type { FileTime } from './file-times.ts';

/**
 * Yields a JSON line (FileTime) for each test file the runner completed: its wall time in ms,
 * process start to exit, and whether it passed. Per-test events are skipped.
 */
export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { file, name, details } = event.data;
    // The runner names a file's own event by the file's path relative to its working directory.
    if (file === undefined || resolve(name) !== file) continue;
    const time: FileTime = { file: name, ms: Math.round(details.duration_ms), passed: details.passed };
    yield `${JSON.stringify(time)}\n`;
  }
}
