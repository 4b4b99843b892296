// Which API errors no retry can fix: the request is refused by RBAC (Forbidden), rejected
// by validation (Invalid), or aimed at a kind the apiserver does not serve. Retrying such
// a request on the usual backoff (5 ms doubling) only adds load; the controller and the
// reconciler instead report it and try again after a long wait or when the spec changes.
// Apart from those: a request refused for what it carried (400 BadRequest, 422 Invalid),
// which a caller that sent someone else's input (a selector an object's owner wrote) reports
// as that owner's error, never its own (refusedInput).

import { BadRequestError, ForbiddenError, InvalidError, NotFoundError } from '../../lib/kube/errors.ts';

/** Why a request can never succeed as it is. */
export interface TerminalFailure {
  /** `Forbidden`, `Invalid`, or `KindNotServed` (a 404 that names no object). */
  readonly reason: 'Forbidden' | 'Invalid' | 'KindNotServed';
  /** The apiserver's message. */
  readonly message: string;
}

/** How long a terminal failure waits before it is tried again unless something changes: 10 min. */
export const TERMINAL_RETRY_MS = 600_000;

/**
 * Classifies `err`: a TerminalFailure, or undefined for everything a retry may fix (conflicts,
 * throttling, server and transport failures, an object that does not exist).
 */
export function terminalFailure(err: unknown): TerminalFailure | undefined {
  if (err instanceof ForbiddenError) return { reason: 'Forbidden', message: err.message };
  if (err instanceof InvalidError) return { reason: 'Invalid', message: err.message };
  // A missing object's 404 names it (details.name); a missing resource type's does not.
  if (err instanceof NotFoundError && err.status.details?.name === undefined)
    return { reason: 'KindNotServed', message: err.message };
  return undefined;
}

/**
 * The apiserver's message when `err` refuses a request for what it carried (400 BadRequest:
 * a label selector or another parameter that does not parse; 422 Invalid), else undefined.
 * No retry of the same request can succeed; when the refused part is what another party
 * wrote, the refusal is theirs to fix.
 */
export function refusedInput(err: unknown): string | undefined {
  return err instanceof BadRequestError || err instanceof InvalidError ? err.message : undefined;
}
