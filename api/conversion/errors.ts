// The error types conversion raises: ConversionError, which the webhook turns into a
// ConversionReview Failure whose message names the object and the field, and which says
// whose fault it is (the sender's, or the webhook's own), and StashKeyMissingError, a
// Failure that says the host has no stash key yet.

/**
 * Whose fault a ConversionError is: `input`, an object that is not a valid AITask at its own
 * version (its sender's: the apiserver sends only objects it stored or was sent at a version
 * it validated); `output`, a valid object whose conversion the target version would refuse
 * (the webhook's own failure).
 */
export type ConversionFault = 'input' | 'output';

/** An object that cannot be converted; `message` says which field and why, `fault` whose it is (default input). */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
  readonly fault: ConversionFault;

  constructor(message: string, fault: ConversionFault = 'input') {
    super(message);
    this.fault = fault;
  }
}

/** Reads `obj[key]` as a string or throws ConversionError naming `path`. */
export function str(obj: Record<string, unknown>, key: string, path: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw new ConversionError(`${path}.${key} must be a string, got ${describe(v)}`);
  return v;
}

/** Reads `obj[key]` as a finite number or throws ConversionError naming `path`. */
export function num(obj: Record<string, unknown>, key: string, path: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new ConversionError(`${path}.${key} must be a number, got ${describe(v)}`);
  return v;
}

/** Reads `obj[key]` as an object or throws ConversionError naming `path`. */
export function obj(parent: Record<string, unknown>, key: string, path: string): Record<string, unknown> {
  const v = parent[key];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new ConversionError(`${path}.${key} must be an object, got ${describe(v)}`);
  }
  return v as Record<string, unknown>;
}

/** `obj[key]` when it is an object, undefined when absent; throws on another type. */
export function optObj(
  parent: Record<string, unknown>,
  key: string,
  path: string,
): Record<string, unknown> | undefined {
  return parent[key] === undefined ? undefined : obj(parent, key, path);
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

/**
 * Conversion had to write or verify a conversion stash and was given no key to sign or check
 * it with (ConvertOptions.key undefined: the host has not loaded it yet). Not a problem of the
 * object: the same conversion succeeds once the key is there.
 */
export class StashKeyMissingError extends Error {
  override readonly name = 'StashKeyMissingError';
}
