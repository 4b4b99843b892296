// A target whose own object holds a value no request of the operator can carry: the label
// selector its owner wrote (a custom kind's /scale status.selector, copied from its status)
// does not parse, found by the operator's own check before the pods' LIST or by the
// apiserver's 400/422 on that LIST. What the object's owner wrote is the owner's error, never
// the operator's: reconcile.ts says it in the task's status (TargetInvalid, Stalled) through
// the usual status write and evaluates the task again at its interval, so a fixed selector
// recovers; it is never retried with backoff nor counted as a reconcile error.

import { checkLabelSelector } from '../../lib/kube/label-selector.ts';
import { refusedInput } from '../runtime/terminal.ts';

/** The target's `field` cannot be used: `object` names it (`Kind namespace/name`), `message` says why. */
export class TargetInvalidError extends Error {
  /** The object holding the value (`Kind namespace/name`). */
  readonly object: string;
  /** Where in it (`/scale status.selector`, `spec.selector`). */
  readonly field: string;

  constructor(object: string, field: string, why: string) {
    super(`the ${field} of ${object} ${why}`);
    this.name = 'TargetInvalidError';
    this.object = object;
    this.field = field;
  }
}

/** Throws TargetInvalidError when `selector`, the target's `field`, does not parse as a label selector. */
export function assertSelector(object: string, field: string, selector: string): void {
  const check = checkLabelSelector(selector);
  if (!check.ok)
    throw new TargetInvalidError(object, field, `does not parse as a label selector: ${check.message}`);
}

/**
 * Runs `request`, which carries the target's `field`: the apiserver's refusal of it for what it
 * carried (refusedInput: 400, 422) becomes a TargetInvalidError with the apiserver's message;
 * any other failure is thrown as it is.
 */
export async function carrying<T>(object: string, field: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    const refused = refusedInput(err);
    if (refused === undefined) throw err;
    throw new TargetInvalidError(object, field, `was refused by the apiserver: ${refused}`);
  }
}
