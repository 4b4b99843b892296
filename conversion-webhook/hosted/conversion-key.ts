// The key that signs the conversion stash, for the webhook hosted in the operator process.
// Every replica must sign and verify with the same key, and a stash signed before an
// upgrade or a certificate rotation must still verify after it, so the key lives in a
// Secret of the operator's namespace (DEFAULT_INSTALL.conversionKeySecret, the Secret of the
// self-signed certificate, under its own data key), added by whichever replica first finds
// it absent and never changed after. Every release's RBAC grants `create` on secrets and
// `get`/`update` on that name, so the key is readable whichever release's role a pod runs
// under during an upgrade; the certificate's renewal keeps the key (cert-rotation.ts).
// Until the key is read the webhook has none (never a stand-in of its own: two replicas
// would sign with different keys and a stashed field would be lost), so a review that must
// write or verify a stash fails saying why (the request that caused it gets an error its
// client may retry; a controller's list or watch retries by itself).

import { randomBytes } from 'node:crypto';
import { MIN_KEY_BYTES } from '../../api/conversion/stash.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../lib/kube/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { ResourceClient, type ResourceType } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { PendingStashKey } from '../review.ts';
import type { WebhookServer } from '../server.ts';

/** How often a conversion key that could not be read is tried again: 10 000 ms. */
export const KEY_RETRY_MS = 10_000;

const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', namespaced: true };

/** The data key of the Secret that holds the key (base64 of 32 random bytes). */
export const KEY_DATA = 'conversion-key';

interface KeySecret {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

/**
 * The key in Secret `namespace/name`, after adding 32 random bytes under KEY_DATA when the
 * Secret lacks them (created when absent, else a PUT bound to the resourceVersion read, so
 * the other fields stay); a replica that loses a race (409) reads again and takes the
 * winner's, up to 5 attempts. Rejects when an API call fails otherwise, or when the Secret
 * holds a key too short to use (never replaced silently).
 */
export async function ensureConversionKey(opts: {
  readonly transport: KubeTransport;
  readonly namespace: string;
  readonly name: string;
}): Promise<Buffer> {
  const secrets = new ResourceClient<KeySecret>(opts.transport, SECRETS);
  const where = `${opts.namespace}/${opts.name}`;
  for (let attempt = 1; ; attempt++) {
    const current = await secrets.get(opts.namespace, opts.name).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    const encoded = current?.data?.[KEY_DATA];
    if (encoded !== undefined) {
      const key = Buffer.from(encoded, 'base64');
      if (key.length < MIN_KEY_BYTES)
        throw new Error(`Secret ${where} has no ${KEY_DATA} of at least ${MIN_KEY_BYTES} bytes`);
      return key;
    }
    const key = randomBytes(MIN_KEY_BYTES);
    const data = { ...current?.data, [KEY_DATA]: key.toString('base64') };
    try {
      if (current === undefined)
        await secrets.create(opts.namespace, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: opts.name, labels: { 'app.kubernetes.io/name': 'aiops-operator' } },
          type: 'Opaque',
          data,
        });
      else await secrets.replace(opts.namespace, opts.name, { ...current, data });
      return key;
    } catch (err) {
      if (attempt >= 5 || !(err instanceof AlreadyExistsError || err instanceof ConflictError)) throw err;
    }
  }
}

/**
 * Why there is no key yet, as a review needing it is told: "conversion key not loaded yet
 * from Secret <namespace>/<name>: <err's message>; retrying every <retryMs / 1000> s".
 */
export function keyNotLoaded(
  secret: { readonly namespace: string; readonly name: string },
  err: unknown,
  retryMs = KEY_RETRY_MS,
): string {
  const why = err instanceof Error ? err.message : String(err);
  return `conversion key not loaded yet from Secret ${secret.namespace}/${secret.name}: ${why}; retrying every ${retryMs / 1000} s`;
}

/**
 * The key of Secret `namespace/name` (ensureConversionKey) for the webhook to start with,
 * or, when it cannot be read, PendingStashKey saying why (keyNotLoaded, retried every
 * `retryMs`, default KEY_RETRY_MS) and logged; provideConversionKey then keeps trying.
 */
export async function firstConversionKey(opts: {
  readonly transport: KubeTransport;
  readonly namespace: string;
  readonly name: string;
  readonly log: Logger;
  readonly retryMs?: number;
}): Promise<Uint8Array | PendingStashKey> {
  try {
    return await ensureConversionKey(opts);
  } catch (err) {
    opts.log.error('conversion stash key Secret not read; retrying after the webhook starts', {
      secret: `${opts.namespace}/${opts.name}`,
      err: err instanceof Error ? err.message : String(err),
    });
    return { pending: keyNotLoaded(opts, err, opts.retryMs) };
  }
}

/**
 * Hands the key of Secret `namespace/name` (ensureConversionKey) to `server`, retrying every
 * `retryMs` (default KEY_RETRY_MS, 10 000 ms) while that fails, each failure logged and
 * handed to `server` as its PendingStashKey (keyNotLoaded), so a review that needs the key
 * fails saying why; one that needs none converts. Returns a function that stops retrying.
 */
export function provideConversionKey(opts: {
  readonly transport: KubeTransport;
  readonly namespace: string;
  readonly name: string;
  readonly server: WebhookServer;
  readonly log: Logger;
  readonly retryMs?: number;
}): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = (): void => {
    ensureConversionKey(opts).then(
      (key) => {
        if (stopped) return;
        opts.server.useStashKey(key);
        opts.log.info('conversion stash key read', { secret: `${opts.namespace}/${opts.name}` });
      },
      (err: unknown) => {
        if (stopped) return;
        const retryMs = opts.retryMs ?? KEY_RETRY_MS;
        opts.server.useStashKey({ pending: keyNotLoaded(opts, err, retryMs) });
        opts.log.error(
          'conversion stash key Secret not read; reviews that must write or verify a stash fail until it is',
          { secret: `${opts.namespace}/${opts.name}`, err: (err as Error).message, retryInMs: retryMs },
        );
        timer = setTimeout(attempt, retryMs);
        timer.unref();
      },
    );
  };
  attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
