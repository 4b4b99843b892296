// How the transport reaches its apiserver: a kubeconfig (file, $KUBECONFIG or in-cluster, any
// auth @kubernetes/client-node supports) with kubectl's overrides applied, turned into the
// server URL, the context's namespace, the HTTPS options of every request (TLS, headers, a
// keep-alive agent) and, for bearer credentials that change while the process runs, the
// source they are read from per request. The library's untyped kubeconfig surface stays here.

import * as http from 'node:http';
import * as https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { credentialSource, kubeconfigFiles } from './credential-source.ts';
import type { CredentialSource } from './credentials.ts';
import { applyOverrides, hasOverrides, type ConnectionOverrides } from './overrides.ts';

/** Thrown when the kubeconfig cannot be loaded or names an unknown context. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

/** What loadConnection reads the connection from. */
export interface ConnectionOptions {
  /** Kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  readonly kubeconfig?: string | undefined;
  /** Context to use instead of current-context. */
  readonly context?: string | undefined;
  /** kubectl's connection and impersonation flags, applied with client-go's precedence (default none). */
  readonly overrides?: ConnectionOverrides | undefined;
  /** User-Agent header of every request. */
  readonly userAgent: string;
}

/** One apiserver and the credentials of one kubeconfig context. */
export interface Connection {
  /** Base URL of the apiserver, without a trailing slash. */
  readonly server: string;
  /** The context's namespace, or `default`. */
  readonly namespace: string;
  /** TLS, headers (User-Agent, impersonation, fixed auth) and the keep-alive agent of every request. */
  readonly requestOptions: https.RequestOptions;
  /** Where the bearer credential is read per request; undefined when auth is fixed at load. */
  readonly credentials: CredentialSource | undefined;
}

/**
 * Loads the kubeconfig and its credentials. Throws KubeConfigError with a one-line reason when
 * that fails, and the overrides' OverrideError when they do not fit the kubeconfig. A token
 * file or exec plugin becomes a CredentialSource read per request, unless an override sets a
 * static token.
 */
export async function loadConnection(opts: ConnectionOptions): Promise<Connection> {
  const kc = new KubeConfig();
  try {
    if (opts.kubeconfig !== undefined) kc.loadFromFile(opts.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new KubeConfigError(
      `cannot load kubeconfig ${opts.kubeconfig ?? ''}: ${(err as Error).message}`.replace('  ', ' '),
    );
  }
  if (opts.context !== undefined) {
    if (!kc.getContextObject(opts.context))
      throw new KubeConfigError(`context "${opts.context}" does not exist in the kubeconfig`);
    kc.setCurrentContext(opts.context);
  }
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  let impersonation: http.OutgoingHttpHeaders = {};
  let staticToken = false;
  if (opts.overrides !== undefined && hasOverrides(opts.overrides)) {
    const effective = applyOverrides(
      {
        clusters: kc.getClusters(),
        users: kc.getUsers(),
        context: kc.getContextObject(kc.getCurrentContext()) ?? undefined,
      },
      opts.overrides,
    );
    kc.loadFromOptions({
      clusters: [effective.cluster],
      users: [effective.user],
      contexts: [
        { name: 'effective', cluster: effective.cluster.name, user: effective.user.name, namespace },
      ],
      currentContext: 'effective',
    });
    impersonation = Object.fromEntries(
      Object.entries(effective.headers).map(([k, v]) => [k, typeof v === 'string' ? v : [...v]]),
    );
    staticToken = effective.staticToken;
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new KubeConfigError('no current cluster in the kubeconfig (set a context or KUBECONFIG)');
  const requestOptions: https.RequestOptions = {};
  let credentials: CredentialSource | undefined;
  try {
    await kc.applyToHTTPSOptions(requestOptions);
    const headers = { ...(requestOptions.headers as http.OutgoingHttpHeaders | undefined) };
    credentials = staticToken
      ? undefined
      : credentialSource(kc.getCurrentUser(), kubeconfigFiles(opts.kubeconfig));
    if (credentials !== undefined) delete headers['Authorization'];
    requestOptions.headers = { ...headers, ...impersonation, 'User-Agent': opts.userAgent };
  } catch (err) {
    throw new KubeConfigError(`cannot load credentials: ${(err as Error).message}`);
  }
  requestOptions.agent = keepAlive(requestOptions.agent);
  return { server: cluster.server.replace(/\/+$/, ''), namespace, requestOptions, credentials };
}

/** Free sockets are closed after this many ms idle, well before the apiserver's 90 s idle timeout. */
const IDLE_SOCKET_MS = 30_000;

/**
 * The library's plain agent without keep-alive opens a TLS connection (handshake, secure
 * context, buffers) for every request: slow, and the churn of native memory keeps a busy
 * controller's RSS hundreds of MiB high. Reuse connections instead; proxy agents stay as they are.
 */
function keepAlive(agent: http.RequestOptions['agent']): http.RequestOptions['agent'] {
  if (!(agent instanceof http.Agent)) return agent;
  const { options } = agent as http.Agent & { options: https.AgentOptions };
  const reuse = { ...options, keepAlive: true, timeout: IDLE_SOCKET_MS };
  if (agent.constructor === https.Agent) return new https.Agent(reuse);
  if (agent.constructor === http.Agent) return new http.Agent(reuse);
  return agent;
}
