// Keeps the AITask CRD's conversion webhook verifiable through an OLM upgrade. The
// InstallPlan replaces the CRD with the bundle's copy, whose webhook has no caBundle, and
// OLM writes the CA back only once the new CSV installs, tens of seconds later; meanwhile
// every read that needs conversion fails TLS verification. OLM keeps the CA across the
// upgrade in the service-cert Secret the hosted webhook already follows
// (conversion-webhook/hosted/webhook-cert-secret.ts), so on each read of it the running operator checks the CRD
// and puts that CA back. The decision is conversion-webhook/hosted/ca-bundle.ts.

import type { Logger } from '../../lib/log.ts';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import { caBundlePatch, type ConversionView, type WebhookService } from './ca-bundle.ts';

/**
 * A function to call with the CA (base64 of its PEM, the Secret's `olmCAKey`): it reads CRD
 * `crdName` and, when `caBundlePatch` says the caBundle is missing for `service`, patches
 * it in (get and patch on that CRD, which the operator's RBAC grants). Rejects on a failed
 * read or patch; the caller retries at its next poll.
 */
export function conversionCABundleKeeper(opts: {
  readonly transport: KubeTransport;
  readonly crdName: string;
  readonly service: WebhookService;
  readonly log: Logger;
}): (caBundle: string) => Promise<void> {
  const crds = new ResourceClient<ConversionView>(opts.transport, CRD_RESOURCE);
  return async (caBundle) => {
    const patch = caBundlePatch(await crds.get(undefined, opts.crdName), opts.service, caBundle);
    if (patch === undefined) return;
    await crds.patch(undefined, opts.crdName, patch);
    opts.log.info("conversion webhook caBundle put back from OLM's service-cert Secret", {
      crd: opts.crdName,
      service: `${opts.service.namespace}/${opts.service.name}`,
    });
  };
}
