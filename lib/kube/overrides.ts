// kubectl's connection and impersonation flags applied to a loaded kubeconfig, with
// client-go's precedence (tools/clientcmd ConfigOverrides): `--cluster` and `--user` pick
// other entries than the context's, then every flag given overrides its field of them —
// `--server`, `--certificate-authority` (which also clears the CA data and the skip-verify
// setting), `--insecure-skip-tls-verify` (which clears the CA), `--tls-server-name` (cleared by
// `--server` unless given too), `--token` (which the user's other bearer sources — token file,
// exec plugin, auth provider — no longer override), `--client-certificate`, `--client-key`,
// and `--as`, `--as-group`, `--as-uid` as the Impersonate-* headers. A pure function over the
// library's entry types; the transport loads the result.

import type { Cluster, Context, User } from '@kubernetes/client-node';

/** The flags, each undefined (or empty) when not given. */
export interface ConnectionOverrides {
  /** `--server`/`-s`: the apiserver URL (`https://` is assumed when no scheme is given). */
  readonly server?: string;
  /** `--cluster`: the kubeconfig cluster entry to use instead of the context's. */
  readonly cluster?: string;
  /** `--user`: the kubeconfig user entry to use instead of the context's. */
  readonly user?: string;
  /** `--token`: a bearer token. */
  readonly token?: string;
  /** `--certificate-authority`: a CA bundle file. */
  readonly certificateAuthority?: string;
  /** `--insecure-skip-tls-verify`: do not verify the server's certificate. */
  readonly insecureSkipTlsVerify?: boolean;
  /** `--tls-server-name`: the name the server certificate is checked against. */
  readonly tlsServerName?: string;
  /** `--client-certificate`: a client certificate file. */
  readonly clientCertificate?: string;
  /** `--client-key`: the client certificate's key file. */
  readonly clientKey?: string;
  /** `--as`: the user to impersonate. */
  readonly as?: string;
  /** `--as-group` (repeatable): the groups to impersonate. */
  readonly asGroups?: readonly string[];
  /** `--as-uid`: the UID to impersonate. */
  readonly asUid?: string;
}

/** The entries of the kubeconfig as loaded: its clusters and users, and the current context. */
export interface KubeconfigEntries {
  readonly clusters: readonly Cluster[];
  readonly users: readonly User[];
  readonly context: Context | undefined;
}

/** The cluster and user to connect with, and the impersonation headers of every request. */
export interface EffectiveConnection {
  readonly cluster: Cluster;
  /** Without `impersonateUser`: impersonation is in `headers`. */
  readonly user: User;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** Whether `--token` was given: the user's changing bearer sources must not replace it. */
  readonly staticToken: boolean;
}

/** A flag names an entry the kubeconfig lacks, or the flags cannot be combined. */
export class OverrideError extends Error {
  override readonly name = 'OverrideError';
}

/** Name of the cluster or user entry made from flags alone (no kubeconfig entry to start from). */
export const FLAGS_ENTRY = 'kubectl-aiops-flags';

const given = (s: string | undefined): s is string => s !== undefined && s !== '';

/** Whether any flag is given (else the kubeconfig is used as loaded). */
export function hasOverrides(o: ConnectionOverrides): boolean {
  return (
    [o.server, o.cluster, o.user, o.token, o.certificateAuthority, o.tlsServerName]
      .concat([o.clientCertificate, o.clientKey, o.as, o.asUid])
      .some(given) ||
    o.insecureSkipTlsVerify === true ||
    (o.asGroups?.length ?? 0) > 0
  );
}

/** `--server` as client-go reads it: `https://` in front when the value has no scheme. */
export function serverUrl(server: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`;
}

/** `entry` without the keys in `drop` (exactOptionalPropertyTypes forbids setting them undefined). */
function without<T extends object, K extends keyof T>(entry: T, ...drop: K[]): Omit<T, K> {
  const keep = Object.entries(entry).filter(([k]) => !(drop as PropertyKey[]).includes(k));
  return Object.fromEntries(keep) as Omit<T, K>;
}

/**
 * The cluster, user and headers the flags make of `kc`, with client-go's precedence. Throws
 * OverrideError when `--cluster` or `--user` names no entry, when there is no cluster and no
 * `--server`, or when groups or a UID are to be impersonated without a user.
 */
export function applyOverrides(kc: KubeconfigEntries, o: ConnectionOverrides): EffectiveConnection {
  const clusterName = given(o.cluster) ? o.cluster : kc.context?.cluster;
  const foundCluster = kc.clusters.find((c) => c.name === clusterName);
  if (given(o.cluster) && foundCluster === undefined)
    throw new OverrideError(`cluster "${o.cluster}" does not exist in the kubeconfig`);
  if (foundCluster === undefined && !given(o.server))
    throw new OverrideError('no current cluster in the kubeconfig (set a context, KUBECONFIG or --server)');
  let cluster: Cluster = foundCluster ?? { name: FLAGS_ENTRY, server: '', skipTLSVerify: false };
  if (given(o.server)) cluster = { ...cluster, server: serverUrl(o.server) };
  if (o.insecureSkipTlsVerify === true || given(o.certificateAuthority)) {
    cluster = {
      ...without(cluster, 'caData', 'caFile'),
      skipTLSVerify: o.insecureSkipTlsVerify === true,
      ...(given(o.certificateAuthority) ? { caFile: o.certificateAuthority } : {}),
    };
  }
  if (given(o.tlsServerName) || given(o.server))
    cluster = {
      ...without(cluster, 'tlsServerName'),
      ...(given(o.tlsServerName) ? { tlsServerName: o.tlsServerName } : {}),
    };

  const userName = given(o.user) ? o.user : kc.context?.user;
  const foundUser = kc.users.find((u) => u.name === userName);
  if (given(o.user) && foundUser === undefined)
    throw new OverrideError(`user "${o.user}" does not exist in the kubeconfig`);
  let user: User = foundUser ?? { name: FLAGS_ENTRY };
  if (given(o.token)) user = { ...without(user, 'exec', 'authProvider'), token: o.token };
  if (given(o.clientCertificate)) user = { ...without(user, 'certData'), certFile: o.clientCertificate };
  if (given(o.clientKey)) user = { ...without(user, 'keyData'), keyFile: o.clientKey };

  const as = given(o.as) ? o.as : user.impersonateUser;
  const groups = (o.asGroups ?? []).filter(given);
  if (!given(as) && (groups.length > 0 || given(o.asUid)))
    throw new OverrideError('--as-group and --as-uid need --as (the user to impersonate)');
  const headers: Record<string, string | readonly string[]> = {};
  if (given(as)) headers['Impersonate-User'] = as;
  if (groups.length > 0) headers['Impersonate-Group'] = groups;
  if (given(o.asUid)) headers['Impersonate-Uid'] = o.asUid;
  return {
    cluster,
    user: without(user, 'impersonateUser'),
    headers,
    staticToken: given(o.token),
  };
}
