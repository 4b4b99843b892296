// Which bearer credential of a kubeconfig user is read per request (a token file, an exec
// plugin) rather than fixed at load, found the way kubectl merges kubeconfig files. Kept apart
// from transport.ts, which only asks for the source and sends what it yields.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { User } from '@kubernetes/client-node';
import { fromYaml } from '../yaml.ts';
import {
  execConfigOf,
  execCredential,
  tokenFileCredential,
  tokenFileOfUser,
  type CredentialSource,
} from './credentials.ts';

/**
 * Where the user's bearer token comes from when it can change: a token file (the library's
 * in-cluster `tokenFile` auth provider, or the user's `tokenFile` in one of `files`, which
 * the library does not read), then an exec plugin. Undefined for anything else: the library's
 * header (a static token, an auth provider's) is then sent as loaded, and a 401 is final.
 */
export function credentialSource(user: User | null, files: readonly string[]): CredentialSource | undefined {
  if (user === null) return undefined;
  const provider: unknown = user.authProvider;
  const inCluster =
    typeof provider === 'object' && provider !== null && 'config' in provider
      ? (provider.config as Record<string, unknown> | undefined)?.['tokenFile']
      : undefined;
  const tokenFile = typeof inCluster === 'string' ? inCluster : kubeconfigTokenFile(files, user.name);
  if (tokenFile !== undefined) return tokenFileCredential(tokenFile);
  const exec = execConfigOf(user.exec);
  return exec === undefined ? undefined : execCredential(exec);
}

/** The kubeconfig files loaded, as the library picks them: the one given, else $KUBECONFIG's, else ~/.kube/config. */
export function kubeconfigFiles(file: string | undefined): string[] {
  if (file !== undefined) return [file];
  const env = process.env['KUBECONFIG'];
  if (env !== undefined && env !== '') return env.split(delimiter).filter((f) => f !== '');
  return [join(homedir(), '.kube', 'config')];
}

/** The first `tokenFile` of `user` in `files` (as kubectl merges them, the first wins), made absolute. */
function kubeconfigTokenFile(files: readonly string[], user: string): string | undefined {
  for (const file of files) {
    let doc: unknown;
    try {
      doc = fromYaml(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    const found = tokenFileOfUser(doc, user);
    if (found !== undefined) return isAbsolute(found) ? found : join(dirname(file), found);
  }
  return undefined;
}
