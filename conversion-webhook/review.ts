// The ConversionReview protocol (apiextensions.k8s.io/v1) as a pure function: request
// body in, HTTP status and response body out. The conversion itself is api/'s; this
// module enforces the apiserver's rules (same uid, same order and count, apiVersion =
// desiredAPIVersion) and turns every problem into a specific Failure, never a throw. A
// conversion stash that cannot be trusted is not a problem of the review: the object is
// converted without it and the rejection is returned for the caller to log and count.
// Without a key (PendingStashKey: the host has not loaded it yet) a review converts unless
// one of its objects needs the key, to write a stash (a down-conversion that drops a field)
// or to verify one (a signed stash on the object); that review gets a Failure saying why
// the key is missing, as signing with a stand-in key would lose the field on any other
// replica. Telling the two apart costs nothing: it is found while converting. A review
// whose desiredAPIVersion is not a served version is refused whole, objects or not, so
// nothing a caller names ever reaches a metric label or a log line unbounded. A Failure says
// whose fault it is (`malformed`): a review or object that is not what the apiserver sends
// (not a ConversionReview, a version not served, an object that is not a valid AITask at its
// own version) is its sender's, which anyone who reaches the port can send; a valid object
// whose conversion fails is the webhook's own.

import { convert, type LooseAITask } from '../api/conversion/convert.ts';
import { VERSIONS } from '../api/crd.ts';
import { GROUP } from '../api/schema/common.ts';
import { ConversionError, StashKeyMissingError } from '../api/conversion/errors.ts';
import type { StashRejection } from '../api/conversion/stash.ts';

export const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

/** An apiVersion the CRD serves, e.g. `aiops.example.com/v2`. */
export type ServedAPIVersion = `${typeof GROUP}/${(typeof VERSIONS)[number]}`;

/** Every apiVersion the CRD serves: the only values a review may ask for, and the only `desired` labels. */
export const SERVED_API_VERSIONS: readonly ServedAPIVersion[] = VERSIONS.map(
  (v): ServedAPIVersion => `${GROUP}/${v}`,
);

/** Longest part of a caller's value a Failure message quotes (characters). */
const QUOTE_CHARS = 64;

/** `value` as JSON, cut to QUOTE_CHARS characters with an ellipsis: caller input quoted in a message. */
function quote(value: string): string {
  const json = JSON.stringify(value);
  return json.length <= QUOTE_CHARS ? json : `${json.slice(0, QUOTE_CHARS)}…`;
}

export interface ReviewResponse {
  apiVersion: string;
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects?: LooseAITask[];
    result: { status: 'Success' } | { status: 'Failure'; message: string };
  };
}

/**
 * No stash key yet: `pending` says why and when it is tried again (e.g. "conversion key not
 * loaded yet from Secret <ns>/<name>: <why>; retrying every 10 s"); a review that needs the
 * key gets a Failure carrying it.
 */
export interface PendingStashKey {
  readonly pending: string;
}

export interface ReviewOutcome {
  /** 200 for any well-formed review (success or per-object failure), 400 for a malformed one. */
  httpStatus: 200 | 400;
  body: ReviewResponse;
  /** Objects converted (0 on failure). */
  objects: number;
  /** The desired version, for metrics: one of SERVED_API_VERSIONS, or `invalid` when not served. */
  desired: ServedAPIVersion | 'invalid';
  /** Stashes (or stash entries) ignored, each with the object it was on (`ns/name`). */
  stashRejections: (StashRejection & { readonly object: string })[];
  /** True when the review failed because it needed the stash key and there was none (PendingStashKey). */
  stashKeyMissing: boolean;
  /** The object a Failure is about (`ns/name`); empty when it is about the review itself. */
  failedObject: string;
  /**
   * True when the review failed because of what its sender sent: not a ConversionReview (400),
   * no desired or a version not served, objects not a list, or an object that is not a valid
   * AITask at its own version (ConversionError with fault `input`). The apiserver sends none
   * of these; a Failure with it false is the webhook's own (a valid object it could not convert).
   */
  malformed: boolean;
}

function failure(
  httpStatus: 200 | 400,
  uid: string,
  message: string,
  apiVersion = REVIEW_API_VERSION,
  desired: ReviewOutcome['desired'] = 'invalid',
  stashKeyMissing = false,
  failedObject = '',
  malformed = true,
): ReviewOutcome {
  return {
    httpStatus,
    objects: 0,
    desired,
    stashRejections: [],
    stashKeyMissing,
    failedObject,
    malformed,
    body: { apiVersion, kind: 'ConversionReview', response: { uid, result: { status: 'Failure', message } } },
  };
}

/**
 * Answers one ConversionReview given its raw body text; `key` signs and verifies the
 * conversion stash (api/conversion/stash.ts), or is PendingStashKey: then a review that
 * needs it is a Failure (`stashKeyMissing`) and any other converts as usual.
 */
export function handleReview(text: string, key: Uint8Array | PendingStashKey): ReviewOutcome {
  const stashKey = key instanceof Uint8Array ? key : undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return failure(400, '', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return failure(400, '', 'request body must be a ConversionReview object');
  }
  const review = parsed as Record<string, unknown>;
  if (review['kind'] !== 'ConversionReview')
    return failure(400, '', `kind must be ConversionReview, got ${JSON.stringify(review['kind'] ?? null)}`);
  if (review['apiVersion'] !== REVIEW_API_VERSION) {
    return failure(
      400,
      '',
      `apiVersion ${JSON.stringify(review['apiVersion'] ?? null)} is not supported; use ${REVIEW_API_VERSION}`,
    );
  }
  const request = review['request'];
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    return failure(400, '', 'request is missing');
  const req = request as Record<string, unknown>;
  const uid = req['uid'];
  if (typeof uid !== 'string' || uid === '') return failure(400, '', 'request.uid is missing');
  const asked = req['desiredAPIVersion'];
  if (typeof asked !== 'string' || asked === '')
    return failure(200, uid, 'request.desiredAPIVersion is missing');
  const desired = SERVED_API_VERSIONS.find((v) => v === asked);
  if (desired === undefined)
    return failure(
      200,
      uid,
      `request.desiredAPIVersion ${quote(asked)} is not served; expected one of ${SERVED_API_VERSIONS.join(', ')}`,
    );
  const objects = req['objects'];
  if (!Array.isArray(objects))
    return failure(200, uid, 'request.objects must be a list', REVIEW_API_VERSION, desired);
  const converted: LooseAITask[] = [];
  const stashRejections: ReviewOutcome['stashRejections'] = [];
  for (const [i, o] of objects.entries()) {
    try {
      converted.push(
        convert(o, desired, {
          key: stashKey,
          onStashRejected: (r) => stashRejections.push({ ...r, object: identify(o) }),
        }),
      );
    } catch (err) {
      if (err instanceof StashKeyMissingError && !(key instanceof Uint8Array))
        return failure(
          200,
          uid,
          `cannot convert object ${i} (${identify(o)}) to ${desired}: it needs the conversion stash key (to write or verify its stash), and ${key.pending}`,
          REVIEW_API_VERSION,
          desired,
          true,
          identify(o),
          false,
        );
      const why = err instanceof ConversionError ? err.message : `internal error: ${String(err)}`;
      return failure(
        200,
        uid,
        `cannot convert object ${i} (${identify(o)}) to ${desired}: ${why}`,
        REVIEW_API_VERSION,
        desired,
        false,
        identify(o),
        err instanceof ConversionError && err.fault === 'input',
      );
    }
  }
  return {
    httpStatus: 200,
    objects: converted.length,
    desired,
    stashRejections,
    stashKeyMissing: false,
    failedObject: '',
    malformed: false,
    body: {
      apiVersion: REVIEW_API_VERSION,
      kind: 'ConversionReview',
      response: { uid, convertedObjects: converted, result: { status: 'Success' } },
    },
  };
}

function identify(o: unknown): string {
  const meta =
    typeof o === 'object' && o !== null
      ? (o as { metadata?: { namespace?: unknown; name?: unknown } }).metadata
      : undefined;
  const ns = typeof meta?.namespace === 'string' ? meta.namespace : '';
  const name = typeof meta?.name === 'string' ? meta.name : '<unnamed>';
  return ns ? `${ns}/${name}` : name;
}
