// Bearer credentials that change while the process runs, as client-go keeps them: a token
// file (the in-cluster service-account token, kubeconfig `tokenFile`) is read again when it
// changes and at least every minute; an exec plugin's credential (kubeconfig `exec`) is fetched
// again once its `expirationTimestamp` passes. Either is read again at once after the
// apiserver answered 401 (invalidate). The decisions are pure functions; the sources are thin
// adapters over the file system and child processes.

import { execFile } from 'node:child_process';
import { readFile as readFileCallback, stat as statCallback } from 'node:fs';
import { promisify } from 'node:util';

// node:fs's callback functions, not node:fs/promises: loading that module at start also loads
// readline and the file watchers (~3 ms of every start), for two calls.
const stat = promisify(statCallback);
const readFile = promisify(readFileCallback);

/** A token file is read again at least this often (ms), as client-go's cached file token source. */
export const TOKEN_FILE_MAX_AGE_MS = 60_000;

/** An exec plugin is killed after this many ms without an answer. */
export const EXEC_TIMEOUT_MS = 60_000;

/** Where the `Authorization` header of the next request comes from. */
export interface CredentialSource {
  /** The header value (`Bearer <token>`), read again when due; rejects when it cannot be had. */
  authorization(): Promise<string>;
  /** Forgets what was read, so the next authorization() reads again (after a 401). */
  invalidate(): void;
}

/** What identifies one version of a file: a rotation (atomic rename or rewrite) changes it. */
export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** The last read of a token file. */
export interface TokenFileRead {
  readonly stamp: FileStamp;
  /** When it was read (ms since the epoch). */
  readonly at: number;
}

/**
 * Whether a token file must be read again at `now`: never read (or invalidated), changed since
 * (another inode, size or mtime), or read `maxAgeMs` or longer ago (default TOKEN_FILE_MAX_AGE_MS,
 * which catches a rewrite that kept size and mtime).
 */
export function tokenFileDue(
  last: TokenFileRead | undefined,
  stamp: FileStamp,
  now: number,
  maxAgeMs = TOKEN_FILE_MAX_AGE_MS,
): boolean {
  if (last === undefined) return true;
  const s = last.stamp;
  if (s.ino !== stamp.ino || s.size !== stamp.size || s.mtimeMs !== stamp.mtimeMs) return true;
  return now - last.at >= maxAgeMs;
}

/** A kubeconfig `users[].user.exec` entry, checked. */
export interface ExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  /** client.authentication.k8s.io version the plugin is asked for (`KUBERNETES_EXEC_INFO`). */
  readonly apiVersion: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The exec entry of a kubeconfig user as the library hands it over (untyped), or undefined when
 * there is none. Throws when it is there but malformed (no command, args or env of the wrong shape).
 */
export function execConfigOf(raw: unknown): ExecConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw) || typeof raw['command'] !== 'string' || raw['command'] === '')
    throw new Error('kubeconfig exec entry has no command');
  const args: unknown = raw['args'] ?? [];
  if (!Array.isArray(args) || !args.every((a): a is string => typeof a === 'string'))
    throw new Error('kubeconfig exec args must be a list of strings');
  const env: unknown = raw['env'] ?? [];
  const isVar = (e: unknown): e is { name: string; value: string } =>
    isRecord(e) && typeof e['name'] === 'string' && typeof e['value'] === 'string';
  if (!Array.isArray(env) || !env.every(isVar))
    throw new Error('kubeconfig exec env must be a list of {name, value}');
  return {
    command: raw['command'],
    args,
    env,
    apiVersion: typeof raw['apiVersion'] === 'string' ? raw['apiVersion'] : 'client.authentication.k8s.io/v1',
  };
}

/** A bearer token from an exec plugin and when it expires (ms since the epoch; none: until a 401). */
export interface ExecToken {
  readonly token: string;
  readonly expiresAt?: number;
}

/** Parses an ExecCredential printed by an exec plugin; throws when it carries no token. */
export function parseExecCredential(stdout: string): ExecToken {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new Error('exec plugin did not print an ExecCredential (not JSON)');
  }
  const status = isRecord(doc) ? doc['status'] : undefined;
  const token = isRecord(status) ? status['token'] : undefined;
  if (typeof token !== 'string' || token === '')
    throw new Error('exec plugin printed an ExecCredential without status.token');
  const expiry = isRecord(status) ? status['expirationTimestamp'] : undefined;
  const expiresAt = typeof expiry === 'string' ? Date.parse(expiry) : NaN;
  return Number.isNaN(expiresAt) ? { token } : { token, expiresAt };
}

/** Whether an exec token may still be sent at `now`: it has no expiry, or it is before it. */
export function execTokenFresh(t: ExecToken | undefined, now: number): t is ExecToken {
  return t !== undefined && (t.expiresAt === undefined || now < t.expiresAt);
}

/** A token file, read again when tokenFileDue says so; a failed re-read keeps the last token. */
export function tokenFileCredential(path: string): CredentialSource {
  let last: (TokenFileRead & { token: string }) | undefined;
  return {
    async authorization() {
      try {
        const s = await stat(path);
        const stamp = { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
        if (tokenFileDue(last, stamp, Date.now())) {
          const token = (await readFile(path, 'utf8')).trim();
          last = { stamp, at: Date.now(), token };
        }
      } catch (err) {
        if (last === undefined)
          throw new Error(`cannot read token file ${path}: ${(err as Error).message}`, { cause: err });
      }
      if (last === undefined) throw new Error(`cannot read token file ${path}`);
      return `Bearer ${last.token}`;
    },
    invalidate() {
      if (last !== undefined) last = { ...last, at: -Infinity };
    },
  };
}

const run = promisify(execFile);

/**
 * An exec plugin's token, fetched again once it expired or was invalidated; concurrent
 * requests share one run. The plugin gets `KUBERNETES_EXEC_INFO` (non-interactive) as kubectl
 * sets it, and is killed after EXEC_TIMEOUT_MS.
 */
export function execCredential(exec: ExecConfig): CredentialSource {
  let current: ExecToken | undefined;
  let pending: Promise<ExecToken> | undefined;
  const fetch = async (): Promise<ExecToken> => {
    const info = { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } };
    const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    for (const e of exec.env) env[e.name] = e.value;
    const { stdout } = await run(exec.command, [...exec.args], { env, timeout: EXEC_TIMEOUT_MS });
    return parseExecCredential(stdout);
  };
  return {
    async authorization() {
      if (!execTokenFresh(current, Date.now())) {
        pending ??= fetch().finally(() => (pending = undefined));
        current = await pending;
      }
      return `Bearer ${current.token}`;
    },
    invalidate() {
      current = undefined;
    },
  };
}

/**
 * The `tokenFile` of user `user` in a parsed kubeconfig document (the library reads no such
 * field), or undefined. A relative path is returned as written; the caller resolves it
 * against the kubeconfig's directory.
 */
export function tokenFileOfUser(doc: unknown, user: string): string | undefined {
  const users = isRecord(doc) ? doc['users'] : undefined;
  if (!Array.isArray(users)) return undefined;
  const entry: unknown = users.find((u) => isRecord(u) && u['name'] === user);
  const fields = isRecord(entry) ? entry['user'] : undefined;
  const file = isRecord(fields) ? fields['tokenFile'] : undefined;
  return typeof file === 'string' && file !== '' ? file : undefined;
}
