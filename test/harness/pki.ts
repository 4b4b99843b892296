// Certificates and keys for the harness control plane, made with the `openssl` CLI (Node's
// crypto cannot issue X.509 certificates). Layout under <dir>/pki is documented in README.md:
// a serving CA, a client CA, one client cert per identity, a front-proxy (request-header) CA
// and client, and a service-account key pair.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NODE_NET } from './real-node/layout.ts';

const run = promisify(execFile);

/** A client identity: CN is the user name, O the groups (RBAC). */
export interface ClientIdentity {
  readonly file: string;
  readonly cn: string;
  readonly groups: readonly string[];
}

/** Identities the harness issues client certificates for (file stem → user/groups). */
export const CLIENT_IDENTITIES = {
  admin: { file: 'admin', cn: 'aiops-admin', groups: ['system:masters'] },
  controllerManager: { file: 'kube-controller-manager', cn: 'system:kube-controller-manager', groups: [] },
  scheduler: { file: 'kube-scheduler', cn: 'system:kube-scheduler', groups: [] },
  kwok: { file: 'kwok', cn: 'kwok-controller', groups: ['system:masters'] },
  /** The real node's kubelet (Node authorizer: system:node:<name> in system:nodes). */
  kubelet: { file: 'kubelet', cn: 'system:node:aiops-node', groups: ['system:nodes'] },
  /** kube-proxy (bound to system:node-proxier by the apiserver's bootstrap policy). */
  kubeProxy: { file: 'kube-proxy', cn: 'system:kube-proxy', groups: [] },
  /** The apiserver towards kubelets (logs, exec, port-forward). */
  apiserverKubeletClient: {
    file: 'apiserver-kubelet-client',
    cn: 'kube-apiserver-kubelet-client',
    groups: ['system:masters'],
  },
} as const satisfies Record<string, ClientIdentity>;

/** The apiserver's own identity towards aggregated API servers (signed by the front-proxy CA). */
export const FRONT_PROXY_CLIENT: ClientIdentity = {
  file: 'front-proxy-client',
  cn: 'front-proxy-client',
  groups: [],
};

/** Paths of everything in <dir>/pki. */
export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly clientCaCert: string;
  readonly clientCaKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly saKey: string;
  readonly saPub: string;
  readonly frontProxyCaCert: string;
  readonly frontProxyCaKey: string;
  clientCert(id: ClientIdentity): { cert: string; key: string };
}

/** Paths for a pki dir, without creating anything. */
export function pkiPaths(dir: string): Pki {
  const p = (name: string): string => join(dir, name);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    clientCaCert: p('client-ca.crt'),
    clientCaKey: p('client-ca.key'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyCaKey: p('front-proxy-ca.key'),
    clientCert: (id) => ({ cert: p(`${id.file}.crt`), key: p(`${id.file}.key`) }),
  };
}

const DAYS = '30';
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function issue(
  dir: string,
  name: string,
  subject: string,
  extensions: string[],
  signer?: { cert: string; key: string },
): Promise<void> {
  const cnf = join(dir, `${name}.cnf`);
  await writeFile(cnf, ['[req]', 'distinguished_name=dn', '[dn]', '[v3]', ...extensions, ''].join('\n'));
  const signArgs = signer ? ['-CA', signer.cert, '-CAkey', signer.key] : [];
  // prettier-ignore
  await run('openssl', [
    'req', '-x509', '-new', ...EC, '-days', DAYS, '-subj', subject,
    '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`),
    '-config', cnf, '-extensions', 'v3', ...signArgs,
  ]);
}

const CA_EXT = [
  'basicConstraints=critical,CA:TRUE',
  'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
];
const LEAF = (usage: string): string[] => [
  'basicConstraints=critical,CA:FALSE',
  'keyUsage=critical,digitalSignature,keyEncipherment',
  `extendedKeyUsage=${usage}`,
];

/** Subject string for openssl: `/O=g1/O=g2/CN=name`. Group names here contain no `/`. */
function subjectOf(id: ClientIdentity): string {
  return id.groups.map((g) => `/O=${g}`).join('') + `/CN=${id.cn}`;
}

/**
 * Creates <dir> and issues all certificates and keys (ECDSA P-256, valid 30 days) with
 * `openssl` (needs OpenSSL >= 3.0 for `req -x509 -CA`). Runs the openssl calls in parallel;
 * no retries: an openssl failure rejects with its stderr.
 */
export async function createPki(dir: string): Promise<Pki> {
  await mkdir(dir, { recursive: true });
  const pki = pkiPaths(dir);
  const caSigner = { cert: pki.caCert, key: pki.caKey };
  const clientSigner = { cert: pki.clientCaCert, key: pki.clientCaKey };
  const serving = async (): Promise<void> => {
    await issue(dir, 'ca', '/CN=aiops-harness-serving-ca', CA_EXT);
    // prettier-ignore
    const sans = [
      'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.cluster.local', 'IP:127.0.0.1', 'IP:10.0.0.1',
      // The real node reaches the apiserver through a forwarder on its link's host end.
      `IP:${NODE_NET.hostIP}`,
    ];
    await issue(
      dir,
      'apiserver',
      '/CN=kube-apiserver',
      [...LEAF('serverAuth'), `subjectAltName=${sans.join(',')}`],
      caSigner,
    );
  };
  const clients = async (): Promise<void> => {
    await issue(dir, 'client-ca', '/CN=aiops-harness-client-ca', CA_EXT);
    await Promise.all(
      Object.values(CLIENT_IDENTITIES).map((id: ClientIdentity) =>
        issue(dir, id.file, subjectOf(id), LEAF('clientAuth'), clientSigner),
      ),
    );
  };
  const frontProxy = async (): Promise<void> => {
    await issue(dir, 'front-proxy-ca', '/CN=aiops-harness-front-proxy-ca', CA_EXT);
    await issue(dir, FRONT_PROXY_CLIENT.file, subjectOf(FRONT_PROXY_CLIENT), LEAF('clientAuth'), {
      cert: pki.frontProxyCaCert,
      key: pki.frontProxyCaKey,
    });
  };
  const serviceAccount = async (): Promise<void> => {
    await run('openssl', [
      'genpkey',
      '-algorithm',
      'EC',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-out',
      pki.saKey,
    ]);
    await run('openssl', ['pkey', '-in', pki.saKey, '-pubout', '-out', pki.saPub]);
  };
  await Promise.all([serving(), clients(), frontProxy(), serviceAccount()]);
  return pki;
}

/** Reads a PEM file as a string (for https options and kubeconfig data). */
export function readPem(path: string): Promise<string> {
  return readFile(path, 'utf8');
}
