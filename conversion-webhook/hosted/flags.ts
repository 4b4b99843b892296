// The flags of the conversion webhook the operator process hosts (`--webhook-port` and the
// rest), in --help order after the operator's own: each with its parser, default, help and
// docs row (lib/options-table.ts). cmd/operator.ts adds them to the operator's command line,
// under the operator's environment variables.

import { DEFAULT_INSTALL } from '../../api/install.ts';
import { flag, integer, text, toggle } from '../../lib/options-table.ts';
import { DEFAULT_CERT_DIR } from '../../lib/tls/serving.ts';
import { DEFAULT_MAX_CONCURRENT_REVIEWS } from '../server.ts';

/** Every flag of the hosted webhook. */
export const HOSTED_WEBHOOK_FLAGS = {
  webhookPort: flag({
    flags: '--webhook-port <port>',
    help: 'serve the conversion webhook on this port (OLM and the manifests use 9443; default: off)',
    parse: integer(0, 65535, (v) => `expected a port from 0 to 65535, got "${v}"`),
    docs: {
      default: 'off',
      meaning: 'serve the conversion webhook on this port (OLM and the manifests use 9443)',
    },
  }),
  webhookCertDir: flag({
    flags: '--webhook-cert-dir <dir>',
    help: 'directory with the webhook tls.crt and tls.key (reloaded on change)',
    parse: text,
    default: DEFAULT_CERT_DIR,
    docs: {
      default: '`/tmp/k8s-webhook-server/serving-certs`',
      meaning: 'directory with the webhook tls.crt and tls.key (reloaded on change)',
    },
  }),
  selfSignedCert: toggle(
    '--self-signed-cert',
    'issue and renew the webhook certificate in a Secret and patch the CRD caBundle (plain install without OLM)',
    false,
    {
      default: 'off',
      meaning:
        'issue and renew the webhook certificate in a Secret and patch the CRD caBundle (plain install without OLM)',
    },
  ),
  webhookSecret: flag({
    flags: '--webhook-secret <name>',
    help: 'Secret holding the self-signed CA and certificate',
    parse: text,
    default: DEFAULT_INSTALL.webhookCertSecret,
    docs: {
      default: '`aiops-webhook-service-cert`',
      meaning: 'Secret holding the self-signed CA and certificate',
    },
  }),
  webhookService: flag({
    flags: '--webhook-service <name>',
    help: 'Service in front of the webhook (names the certificate covers)',
    parse: text,
    default: DEFAULT_INSTALL.webhookService,
    docs: {
      default: '`aiops-webhook-service`',
      meaning: 'Service in front of the webhook (names the certificate covers)',
    },
  }),
  certSyncInterval: flag({
    flags: '--cert-sync-interval <seconds>',
    help: 'how often --self-signed-cert re-checks the certificate',
    parse: integer(10, Number.MAX_SAFE_INTEGER, (v) => `expected whole seconds ≥ 10, got "${v}"`),
    default: 3600,
    docs: {
      default: '`3600`',
      meaning: 'how often `--self-signed-cert` re-checks the certificate (seconds)',
    },
  }),
  webhookShutdownDelay: flag({
    flags: '--webhook-shutdown-delay <seconds>',
    help: "after SIGTERM, keep answering conversions this long while the pod leaves the Service's endpoints (the leader steps down and /readyz fails at once); SIGINT or a second signal stops at once",
    parse: integer(0, 300, (v) => `expected whole seconds from 0 to 300, got "${v}"`),
    default: 5,
    docs: {
      default: '`5`',
      meaning:
        "after SIGTERM, keep answering conversions this long (seconds, 0–300) while the pod leaves the Service's endpoints; the leader steps down and `/readyz` fails at once; SIGINT or a second signal stops at once",
    },
  }),
  webhookMaxConcurrentReviews: flag({
    flags: '--webhook-max-concurrent-reviews <n>',
    help: "most ConversionReviews the hosted webhook reads or converts at once, a count ≥ 1 (the default of `npm run webhook`'s --max-concurrent-reviews too); one more gets HTTP 429 with Retry-After: 1 s, which the apiserver retries",
    parse: integer(1, Number.MAX_SAFE_INTEGER, (v) => `expected a whole number ≥ 1, got "${v}"`),
    default: DEFAULT_MAX_CONCURRENT_REVIEWS,
    docs: {
      default: '`8`',
      meaning:
        'ConversionReviews the hosted webhook reads or converts at once (a count, ≥ 1; `npm run webhook`: `--max-concurrent-reviews`, same default); one more gets HTTP 429 with `Retry-After: 1`, which the apiserver retries',
    },
  }),
  webhookCertFromSecret: flag({
    flags: '--webhook-cert-from-secret <name>',
    help: "also read the webhook's tls.crt/tls.key from this Secret in the pod's namespace every 5 s, ahead of the kubelet's volume refresh, and put its CA (olmCAKey) back into the CRD's conversion webhook when an OLM InstallPlan left it without one while it points at the Secret's Service, <service>-cert (the CSV names OLM's <deployment>-service-cert; default: files only)",
    parse: text,
    docs: {
      default: 'files only',
      meaning:
        "also read the webhook's tls.crt/tls.key from this Secret in the pod's namespace every 5 s, ahead of the kubelet's volume refresh, and put its CA (`olmCAKey`) back into the CRD's conversion webhook when an OLM InstallPlan has replaced the CRD with the bundle's copy, which has none, while the webhook points at the Secret's Service (`<service>-cert`; the CSV passes OLM's `aiops-operator-service-cert`)",
    },
  }),
  conversionKeySecret: flag({
    flags: '--conversion-key-secret <name>',
    help: "Secret in the pod's namespace holding the key that signs the conversion stash (data key `conversion-key`; by default the self-signed certificate's Secret, whose name every release's RBAC grants get and update on); the key is added when absent and kept across upgrades and certificate renewals. While it cannot be read (retried every 10 s) the webhook has no key: a review that must write or verify a conversion stash gets a Failure saying why (counted in aiops_conversion_failures_total{reason=\"stash_key_unavailable\"}), every other review converts",
    parse: text,
    default: DEFAULT_INSTALL.conversionKeySecret,
    docs: {
      default: '`aiops-webhook-service-cert`',
      meaning: `Secret in the pod's namespace whose \`conversion-key\` signs the conversion stash (the self-signed certificate's Secret, which every release's RBAC grants); added when absent, kept across upgrades and renewals; while it cannot be read (retried every 10 s) a review that must write or verify a stash fails saying why (\`aiops_conversion_failures_total{reason="stash_key_unavailable"}\`), others convert`,
    },
  }),
  migrateStorageOnStart: toggle(
    '--migrate-storage-on-start',
    'once started, rewrite every AITask at the storage version and trim the CRD storedVersions (as kubectl aiops migrate-storage); retried with backoff while the conversion webhook is unreachable; exits 1 when Forbidden, Unauthorized or Invalid',
    false,
    {
      default: 'off',
      meaning:
        'once started, rewrite every AITask at the storage version and trim the CRD storedVersions (as kubectl aiops migrate-storage); see below',
    },
  ),
} as const;
