// Parsing of the kubectl-style global flags the plugin implements itself (kubectl passes
// none of its own to plugins): output format (with kubectl's `-o name` and `-o jsonpath=`),
// request timeout, colour, and the connection and impersonation flags. Pure functions.

import { parseGoDuration } from '../lib/go-duration.ts';
import type { ConnectionOverrides } from '../lib/kube/overrides.ts';
import { GROUP, SINGULAR } from '../api/schema/common.ts';
import { UsageError } from './errors.ts';
import { JsonPathParseError, parseJsonPath, type JsonPathTemplate } from './jsonpath.ts';

/**
 * Values of `-o`, as completion offers them; `jsonpath` and `jsonpath-as-json` take a
 * template after `=`. `wide` adds columns where a command has more to show.
 */
export const OUTPUT_FORMATS = [
  'table',
  'wide',
  'json',
  'yaml',
  'name',
  'jsonpath=',
  'jsonpath-as-json=',
] as const;
/** The output format a command sees: `jsonpath` covers both JSONPath forms. */
export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name' | 'jsonpath';

/** `-o` as parsed: the format, and for `jsonpath` the template. */
export type Output =
  | { readonly format: Exclude<OutputFormat, 'jsonpath'> }
  | { readonly format: 'jsonpath'; readonly template: JsonPathTemplate; readonly asJson: boolean };

/** Commands whose output lists AITasks, and so print `-o name`. */
export const NAME_COMMANDS: readonly string[] = ['describe', 'explain-phase'];

/** `aitask.aiops.example.com/NAME`, the form `kubectl get -o name` prints. */
export function resourceName(name: string): string {
  return `${SINGULAR}.${GROUP}/${name}`;
}

/** Values of `--color`. */
export const COLOR_MODES = ['auto', 'always', 'never'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

/** The global flags as commander hands them over. */
export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  output: string;
  requestTimeout: string;
  color: string;
  server?: string;
  cluster?: string;
  user?: string;
  token?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  clientCertificate?: string;
  clientKey?: string;
  as?: string;
  asGroup?: string[];
  asUid?: string;
}

const PLAIN_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;

/**
 * Parses `-o` as kubectl does (`-o=json` too). `name` only where `command` lists AITasks
 * (NAME_COMMANDS); a JSONPath template is parsed here, so a bad one is a usage error before
 * any request. Throws UsageError naming the allowed values.
 */
export function parseOutput(value: string, command?: string): Output {
  const v = value.startsWith('=') ? value.slice(1) : value;
  const eq = v.indexOf('=');
  const kind = eq < 0 ? v : v.slice(0, eq);
  const allowed = OUTPUT_FORMATS.filter(
    (f) => f !== 'name' || command === undefined || NAME_COMMANDS.includes(command),
  );
  if (kind === 'jsonpath' || kind === 'jsonpath-as-json') {
    const source = eq < 0 ? '' : v.slice(eq + 1);
    if (source === '')
      throw new UsageError(`template format specified but no template given: use -o ${kind}='{.name}'`);
    try {
      return { format: 'jsonpath', template: parseJsonPath(source), asJson: kind === 'jsonpath-as-json' };
    } catch (err) {
      if (err instanceof JsonPathParseError)
        throw new UsageError(`error parsing jsonpath ${source}: ${err.message}`);
      throw err;
    }
  }
  const found = PLAIN_FORMATS.find((f) => f === v && allowed.includes(f));
  if (found === undefined)
    throw new UsageError(
      `unsupported output format "${v}"${command !== undefined && v === 'name' ? ` for ${command}` : ''}: use one of ${allowed
        .map((f) => (f.endsWith('=') ? `${f}TEMPLATE` : f))
        .join(', ')}`,
    );
  return { format: found };
}

/**
 * The connection and impersonation flags as transport overrides (lib/kube/overrides.ts).
 * Throws UsageError for what kubectl refuses too: `--insecure-skip-tls-verify` together with
 * `--certificate-authority`, and a `--server` that is no URL.
 */
export function connectionOverrides(g: GlobalOptions): ConnectionOverrides {
  if (g.insecureSkipTlsVerify === true && (g.certificateAuthority ?? '') !== '')
    throw new UsageError(
      'specifying a root certificates file with the insecure flag is not allowed: drop --certificate-authority or --insecure-skip-tls-verify',
    );
  if (g.server !== undefined && g.server !== '') {
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(g.server) ? g.server : `https://${g.server}`;
    if (!URL.canParse(withScheme) || !/^https?:$/.test(new URL(withScheme).protocol))
      throw new UsageError(`invalid --server "${g.server}": use a URL like https://host:6443`);
  }
  const o: { -readonly [K in keyof ConnectionOverrides]: ConnectionOverrides[K] } = {};
  if (g.server !== undefined) o.server = g.server;
  if (g.cluster !== undefined) o.cluster = g.cluster;
  if (g.user !== undefined) o.user = g.user;
  if (g.token !== undefined) o.token = g.token;
  if (g.certificateAuthority !== undefined) o.certificateAuthority = g.certificateAuthority;
  if (g.insecureSkipTlsVerify === true) o.insecureSkipTlsVerify = true;
  if (g.tlsServerName !== undefined) o.tlsServerName = g.tlsServerName;
  if (g.clientCertificate !== undefined) o.clientCertificate = g.clientCertificate;
  if (g.clientKey !== undefined) o.clientKey = g.clientKey;
  if (g.as !== undefined) o.as = g.as;
  if (g.asGroup !== undefined && g.asGroup.length > 0) o.asGroups = [...g.asGroup];
  if (g.asUid !== undefined) o.asUid = g.asUid;
  return o;
}

/**
 * Parses `--request-timeout` as kubectl does: `0` means no timeout, a bare integer is
 * seconds, otherwise a Go duration like `1m30s` or `500ms` (lib/go-duration.ts). Returns milliseconds.
 */
export function parseRequestTimeout(value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const ms = parseGoDuration(v);
  if (ms === undefined)
    throw new UsageError(
      `invalid --request-timeout "${value}": use a duration like 30s, 1m or 0 (no timeout)`,
    );
  return ms;
}

/**
 * Whether to colour output: never when NO_COLOR is set (any non-empty value), else
 * `always`/`never` as asked, else (`auto`) only on a TTY.
 */
export function useColor(
  mode: string,
  isTTY: boolean,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (!COLOR_MODES.some((m) => m === mode))
    throw new UsageError(`invalid --color "${mode}": use auto, always or never`);
  if ((env['NO_COLOR'] ?? '') !== '') return false;
  return mode === 'always' || (mode === 'auto' && isTTY);
}
