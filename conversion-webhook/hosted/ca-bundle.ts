// Whether the AITask CRD's conversion webhook has lost the CA that verifies the webhook, and
// the patch that puts it back. During an OLM upgrade the InstallPlan replaces the CRD with
// the bundle's copy, whose webhook clientConfig has no caBundle (OLM cannot know the CA when
// the bundle is built). OLM adds it back only once the new CSV is installing, tens of
// seconds later; until then the apiserver verifies the running webhook against its system
// roots and every read that needs conversion fails with "certificate signed by unknown
// authority". OLM keeps the CA across the upgrade in the service-cert Secret (`olmCAKey`),
// so the running operator can fill the gap with the very value OLM will write.

/** The part of a CRD the decision reads. */
export interface ConversionView {
  readonly spec: {
    readonly conversion?: {
      readonly strategy?: string;
      readonly webhook?: {
        readonly clientConfig?: {
          readonly caBundle?: string;
          readonly service?: { readonly namespace?: string; readonly name?: string };
        };
      };
    };
  };
}

/** The Service the operator's webhook is reached through. */
export interface WebhookService {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The Service whose certificate OLM keeps in Secret `secretName` (OLM names it
 * `<service>-cert`), or undefined for a name of another form.
 */
export function serviceOfCertSecret(namespace: string, secretName: string): WebhookService | undefined {
  return secretName.endsWith('-cert') && secretName.length > '-cert'.length
    ? { namespace, name: secretName.slice(0, -'-cert'.length) }
    : undefined;
}

/**
 * A JSON merge patch setting the conversion webhook's `caBundle` to `caBundle` (base64 of
 * the CA's PEM, as OLM's Secret holds it), or undefined when nothing is to be done: the
 * strategy is not Webhook, the webhook is reached through another Service than `service`
 * (someone else's setup), or a caBundle is already set (never overwritten: OLM's own value
 * wins whenever it has written one).
 */
export function caBundlePatch(
  crd: ConversionView,
  service: WebhookService,
  caBundle: string,
): Record<string, unknown> | undefined {
  const conversion = crd.spec.conversion;
  if (conversion?.strategy !== 'Webhook') return undefined;
  const config = conversion.webhook?.clientConfig;
  if (config?.service?.namespace !== service.namespace || config.service.name !== service.name)
    return undefined;
  if (config.caBundle !== undefined && config.caBundle !== '') return undefined;
  return { spec: { conversion: { webhook: { clientConfig: { caBundle } } } } };
}
