// Names shared by everything that installs the operator (plain manifests, the OLM
// bundle, the operator's own caBundle patching), so they cannot drift apart.

/** Default install coordinates: namespace, Deployment, ServiceAccount and webhook Service. */
export const DEFAULT_INSTALL = {
  namespace: 'aiops-system',
  deployment: 'aiops-operator',
  serviceAccount: 'aiops-operator',
  webhookService: 'aiops-webhook-service',
  /** Secret with the self-signed webhook CA and certificate (plain install, `--self-signed-cert`). */
  webhookCertSecret: 'aiops-webhook-service-cert',
  /** Port the webhook listens on inside the pod (OLM's default container port). */
  webhookPort: 9443,
  /**
   * Secret holding, under data key `conversion-key`, the HMAC key that signs the conversion
   * stash: the same Secret as the self-signed certificate, whose name every release's RBAC
   * grants `get`/`update` on (on an OLM install no certificate lives there, only the key).
   * The hosted webhook adds the key once and keeps it across upgrades and rotations.
   */
  conversionKeySecret: 'aiops-webhook-service-cert',
} as const;

/** Finalizer the operator puts on every AITask. */
export const FINALIZER = 'aiops.example.com/finalizer';
/** Annotation that keeps what an older version cannot represent. */
export const CONVERSION_ANNOTATION = 'aiops.example.com/conversion-data';
/**
 * Annotation with the HMAC-SHA256 (base64url) the conversion webhook computed over the
 * object's uid and the exact text of CONVERSION_ANNOTATION; a stash without a matching one
 * is ignored (api/conversion/stash.ts).
 */
export const CONVERSION_MAC_ANNOTATION = 'aiops.example.com/conversion-data-mac';
/**
 * Annotation that approves a decision waiting for manual approval: its value is the
 * `status.pendingDecision.id` to execute. The operator executes that decision once and then
 * removes the annotation; a value naming no waiting decision is ignored (with an Event) and removed.
 */
export const APPROVE_ANNOTATION = 'aiops.example.com/approve';
