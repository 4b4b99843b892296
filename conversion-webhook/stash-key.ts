// The conversion stash key of the standalone webhook (`npm run webhook`), kept in a file so
// a restarted webhook still reads the stashes it signed. The hosted webhook keeps its key
// in a Secret instead (conversion-webhook/hosted/conversion-key.ts).

import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_KEY_BYTES } from '../api/conversion/stash.ts';

/** File name of the key in the certificate directory, the default of `--stash-key-file`. */
export const STASH_KEY_FILE = 'conversion-stash.key';

/** The default key file: STASH_KEY_FILE in `certDir`. */
export function defaultStashKeyFile(certDir: string): string {
  return join(certDir, STASH_KEY_FILE);
}

/**
 * The key in `file` (its raw bytes), after creating it with 32 random bytes, mode 0600,
 * when it does not exist (a process racing to create it reads the winner's). Throws when
 * the file cannot be read or created, or holds fewer than 32 bytes.
 */
export function loadOrCreateStashKey(file: string): Buffer {
  try {
    writeFileSync(file, randomBytes(MIN_KEY_BYTES), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = readFileSync(file);
  if (key.length < MIN_KEY_BYTES)
    throw new Error(
      `${file} holds ${key.length} bytes; a conversion stash key needs at least ${MIN_KEY_BYTES}`,
    );
  return key;
}
