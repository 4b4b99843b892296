// The hosted webhook's certificate read from its Secret through the API. On an OLM install
// the certificate is a Secret volume, which the kubelet refreshes only on its next sync of
// the pod (a minute or more). During an upgrade OLM issues a new certificate and points the
// CRD's caBundle at it at once, so until then the running pods serve a certificate the
// apiserver no longer trusts and every AITask read that needs conversion fails — and the new
// pods cannot become Ready, because their caches need that conversion. Reading the Secret
// itself (OLM grants `get` on it) closes that window to one poll interval, and to one
// rejected handshake when the apiserver says so: it ends the TLS handshake with an alert
// when it does not trust the served certificate, and that alert triggers a read at once.
// Each read also hands OLM's CA to `onCA`, which puts it back into the CRD when an
// InstallPlan removed it (conversion-webhook/hosted/conversion-ca-bundle.ts) — the other reason the apiserver
// rejects the certificate.

import type { Logger } from '../../lib/log.ts';
import { ResourceClient, type ResourceType } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { WebhookServer } from '../server.ts';

const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', namespaced: true };

/** The least time between two reads of the Secret that rejected handshakes trigger, in ms. */
const REJECTION_READ_GAP_MS = 1_000;

interface TlsSecret {
  data?: { 'tls.crt'?: string; 'tls.key'?: string; olmCAKey?: string };
}

/**
 * Polls Secret `namespace/name` every `intervalMs` (default 5 000) and hands a changed
 * tls.crt/tls.key to `server`, and the CA OLM keeps beside them (`olmCAKey`, base64 of its
 * PEM) to `onCA` on every read that has it. A client rejecting the served certificate
 * (`server.onCertificateRejected`) triggers a read at once, at most one per second however
 * many reject. A failed read or an unusable pair is logged and retried at the next poll; the
 * served certificate stays. Returns a function that stops polling.
 */
export function followCertSecret(opts: {
  readonly transport: KubeTransport;
  readonly namespace: string;
  readonly name: string;
  readonly server: WebhookServer;
  readonly log: Logger;
  readonly intervalMs?: number;
  /** Awaited on every read whose Secret has `olmCAKey`; a rejection is logged like a failed read. */
  readonly onCA?: (caBundle: string) => Promise<void>;
}): () => void {
  const secrets = new ResourceClient<TlsSecret>(opts.transport, SECRETS);
  const where = `${opts.namespace}/${opts.name}`;
  let served = '';
  const poll = async (): Promise<void> => {
    const data = (await secrets.get(opts.namespace, opts.name)).data;
    const cert = data?.['tls.crt'];
    const key = data?.['tls.key'];
    if (cert === undefined || key === undefined)
      throw new Error(`Secret ${where} has no tls.crt and tls.key`);
    if (cert + key !== served) {
      opts.server.useCertificate({ cert: Buffer.from(cert, 'base64'), key: Buffer.from(key, 'base64') });
      if (served !== '') opts.log.info('serving certificate reloaded from its Secret', { secret: where });
      served = cert + key;
    }
    if (data?.olmCAKey !== undefined) await opts.onCA?.(data.olmCAKey);
  };
  let lastRead = 0;
  const tick = (): void => {
    lastRead = Date.now();
    poll().catch((err: unknown) =>
      opts.log.warn('webhook certificate Secret not read; retrying at the next poll', {
        secret: where,
        err: (err as Error).message,
      }),
    );
  };
  let soon: NodeJS.Timeout | undefined;
  const readSoon = (): void => {
    if (soon !== undefined) return;
    soon = setTimeout(
      () => {
        soon = undefined;
        opts.log.info('a client rejected the served certificate; reading its Secret now', { secret: where });
        tick();
      },
      Math.max(0, lastRead + REJECTION_READ_GAP_MS - Date.now()),
    );
    soon.unref();
  };
  const stopListening = opts.server.onCertificateRejected(readSoon);
  tick();
  const timer = setInterval(tick, opts.intervalMs ?? 5_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(soon);
    stopListening();
  };
}
