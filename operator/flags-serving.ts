// The operator's flags for leader election, its endpoints and its logs, in --help order
// after flags.ts': each with its parser, default, help and docs row (lib/options-table.ts).

import { DEFAULT_INSTALL } from '../api/install.ts';
import { flag, integer, text, toggle } from '../lib/options-table.ts';
import { duration, encoding, hostPort, logLevel } from './flag-parsers.ts';

/** Leader election on a coordination.k8s.io Lease, client-go's way. */
export const LEADER_FLAGS = {
  leaderElect: toggle(
    '--leader-elect',
    'elect a leader on a coordination.k8s.io Lease; only the leader reconciles',
    false,
    { default: 'off', meaning: 'elect a leader on a coordination.k8s.io Lease; only the leader reconciles' },
  ),
  leaderElectionNamespace: flag({
    flags: '--leader-election-namespace <ns>',
    help: 'namespace of the Lease',
    parse: text,
    default: process.env['POD_NAMESPACE'] ?? DEFAULT_INSTALL.namespace,
    docs: { default: '`$POD_NAMESPACE`, else `aiops-system`', meaning: 'namespace of the Lease' },
  }),
  leaderElectionId: flag({
    flags: '--leader-election-id <name>',
    help: "name of the Lease; the shipped Role grants get and update on the Lease by name (resourceNames: [aiops-operator-leader]), so another id needs that name edited in the Role's resourceNames",
    parse: text,
    default: 'aiops-operator-leader',
    docs: {
      default: '`aiops-operator-leader`',
      meaning:
        "name of the Lease; the shipped Role grants get and update on the Lease by name (`resourceNames: [aiops-operator-leader]`), so another id needs that name edited in the Role's `resourceNames`",
    },
  }),
  leaseDuration: flag({
    flags: '--lease-duration <d>',
    help: 'how long a Lease is held without renewal',
    parse: duration,
    default: 15_000,
    docs: { default: '`15s`', meaning: 'how long a Lease is held without renewal' },
  }),
  renewDeadline: flag({
    flags: '--renew-deadline <d>',
    help: 'how long the leader retries renewing before giving up',
    parse: duration,
    default: 10_000,
    docs: { default: '`10s`', meaning: 'how long the leader retries renewing before giving up' },
  }),
  retryPeriod: flag({
    flags: '--retry-period <d>',
    help: 'wait between Lease attempts',
    parse: duration,
    default: 2_000,
    docs: { default: '`2s`', meaning: 'wait between Lease attempts' },
  }),
} as const;

/** /metrics, /healthz and /readyz, and the logs. */
export const SERVING_FLAGS = {
  metricsPort: flag({
    flags: '--metrics-port <port>',
    help: 'port of /metrics (0: a free port)',
    parse: integer(0, 65535),
    default: 8080,
    docs: { default: '`8080`', meaning: 'port of /metrics (0: a free port)' },
  }),
  healthPort: flag({
    flags: '--health-port <port>',
    help: 'port of /healthz and /readyz (0: a free port)',
    parse: integer(0, 65535),
    default: 8081,
    docs: { default: '`8081`', meaning: 'port of /healthz and /readyz (0: a free port)' },
  }),
  bindAddress: flag({
    flags: '--bind-address <ip>',
    help: 'address the endpoints listen on',
    parse: text,
    default: '0.0.0.0',
    docs: { default: '`0.0.0.0`', meaning: 'address the endpoints listen on' },
  }),
  metricsSecure: toggle(
    '--metrics-secure',
    'serve /metrics over HTTPS, only to bearer tokens a TokenReview authenticates and a SubjectAccessReview allows to get /metrics (bind the aiops-metrics-reader ClusterRole); false: plain HTTP to anyone who reaches the port, as for a local run',
    true,
    {
      default: 'on',
      meaning:
        'serve /metrics over HTTPS, only to bearer tokens a TokenReview authenticates and a SubjectAccessReview allows `get` on `/metrics` (bind the scraper to the `aiops-metrics-reader` ClusterRole both install paths ship); `false`: plain HTTP to anyone who reaches the port, as `npm start` runs it. The manifests serve it on 8443',
    },
  ),
  metricsCertPath: flag({
    flags: '--metrics-cert-path <dir>',
    help: 'directory with the /metrics serving certificate (reloaded when it changes); unset: a self-signed certificate made at start',
    parse: text,
    docs: {
      default: 'self-signed',
      meaning:
        'directory with the /metrics serving certificate, reloaded when it changes; unset: a self-signed certificate made at start (scrapers then skip verification; the token check still holds)',
    },
  }),
  metricsCertName: flag({
    flags: '--metrics-cert-name <file>',
    help: 'certificate file in --metrics-cert-path',
    parse: text,
    default: 'tls.crt',
    docs: { default: '`tls.crt`', meaning: 'certificate file in `--metrics-cert-path`' },
  }),
  metricsCertKey: flag({
    flags: '--metrics-cert-key <file>',
    help: 'key file in --metrics-cert-path',
    parse: text,
    default: 'tls.key',
    docs: { default: '`tls.key`', meaning: 'key file in `--metrics-cert-path`' },
  }),
  metricsBindAddress: flag({
    flags: '--metrics-bind-address <[host]:port>',
    help: "controller-runtime's name: where /metrics listens (instead of --metrics-port, and --bind-address for it)",
    parse: hostPort,
    conflicts: 'metricsPort',
    docs: {
      default: '`:8080`',
      meaning:
        "controller-runtime's name: where /metrics listens (instead of --metrics-port, and --bind-address for it)",
    },
  }),
  healthProbeBindAddress: flag({
    flags: '--health-probe-bind-address <[host]:port>',
    help: "controller-runtime's name: where /healthz and /readyz listen (instead of --health-port, and --bind-address for them)",
    parse: hostPort,
    conflicts: 'healthPort',
    docs: {
      default: '`:8081`',
      meaning:
        "controller-runtime's name: where /healthz and /readyz listen (instead of --health-port, and --bind-address for them)",
    },
  }),
  logLevel: flag({
    flags: '--zap-log-level, --log-level <level>',
    help: 'log level: debug, info, warn, error, or a zap verbosity > 0 (debug)',
    parse: logLevel,
    default: 'info',
    docs: {
      default: '`info`',
      meaning: 'log level: debug, info, warn, error, or a zap verbosity > 0 (debug)',
    },
  }),
  zapEncoder: flag({
    flags: '--zap-encoder <encoding>',
    help: "log encoding, as controller-runtime's zap flag: json (one object per line: ts, level, logger, msg, fields; stacktrace on errors) or console (one readable line each); default: console on a terminal, else json",
    parse: encoding,
    choices: ['json', 'console'],
    docs: {
      default: 'console on a terminal, else json',
      meaning:
        "log encoding, as controller-runtime's zap flag: `json` (one object per line: `ts`, `level`, `logger`, `msg`, fields; `stacktrace` on errors) or `console` (one readable line each)",
    },
  }),
} as const;
