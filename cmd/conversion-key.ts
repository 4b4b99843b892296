// The key that signs the conversion stash, for the webhook hosted in the operator process.
// Every replica must sign and verify with the same key, and a stash signed before an
// upgrade or a certificate rotation must still verify after it, so the key lives in a
// Secret of its own in the operator's namespace (DEFAULT_INSTALL.conversionKeySecret),
// created by whichever replica first finds it absent and never changed after. The shipped
// RBAC grants `create` on secrets and `get` on this name only.

import { randomBytes } from 'node:crypto';
import { MIN_KEY_BYTES } from '../api/conversion/stash.ts';
import { AlreadyExistsError, NotFoundError } from '../api/kube/errors.ts';
import type { Logger } from '../api/log.ts';
import { ResourceClient, type ResourceType } from '../api/kube/resources.ts';
import type { KubeTransport } from '../api/kube/transport.ts';
import type { WebhookServer } from '../conversion-webhook/server.ts';

const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', namespaced: true };

/** The data key of the Secret that holds the key (base64 of 32 random bytes). */
export const KEY_DATA = 'key';

interface KeySecret {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

/**
 * The key in Secret `namespace/name`, after creating the Secret with 32 random bytes when
 * it does not exist; a replica that loses the race to create it (409 AlreadyExists) reads
 * the winner's. Rejects when the API call fails or the Secret holds no usable key.
 */
export async function ensureConversionKey(opts: {
  readonly transport: KubeTransport;
  readonly namespace: string;
  readonly name: string;
}): Promise<Buffer> {
  const secrets = new ResourceClient<KeySecret>(opts.transport, SECRETS);
  const where = `${opts.namespace}/${opts.name}`;
  const read = async (): Promise<Buffer> => {
    const encoded = (await secrets.get(opts.namespace, opts.name)).data?.[KEY_DATA];
    const key = Buffer.from(encoded ?? '', 'base64');
    if (key.length < MIN_KEY_BYTES)
      throw new Error(`Secret ${where} has no ${KEY_DATA} of at least ${MIN_KEY_BYTES} bytes`);
    return key;
  };
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const key = randomBytes(MIN_KEY_BYTES);
  try {
    await secrets.create(opts.namespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: opts.name, labels: { 'app.kubernetes.io/name': 'aiops-operator' } },
      type: 'Opaque',
      data: { [KEY_DATA]: key.toString('base64') },
    });
    return key;
  } catch (err) {
    if (err instanceof AlreadyExistsError) return read();
    throw err;
  }
}

/**
 * Hands the key of Secret `namespace/name` (ensureConversionKey) to `server`, retrying every
 * `retryMs` (default 10 000) while that fails, each failure logged. Until then the server
 * signs with a key of its own process, which no other replica or later process verifies.
 * Returns a function that stops retrying.
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
        opts.log.error(
          'conversion stash key Secret not read; stashes are signed with a key of this process until it is',
          { secret: `${opts.namespace}/${opts.name}`, err: (err as Error).message },
        );
        timer = setTimeout(attempt, opts.retryMs ?? 10_000);
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
