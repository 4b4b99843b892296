// What a cached object costs the V8 heap, as a conservative charge in bytes: the unit every
// cache's budget is counted in (memory-ledger.ts). JSON bytes are no such unit: a short string
// is `"ab",` (5 bytes) in JSON but a 24-byte heap string behind an 8-byte slot, and an empty
// object is 3 bytes of JSON but ~56 of heap, so an object within a JSON bound can cost the
// heap several times that bound (7,400 short unique finalizers: 60 KB of JSON, ~300 KB of
// heap). The charge walks the object and counts what V8 allocates for it on a 64-bit build
// without pointer compression (Node 24's): each string's header and characters (one byte each
// while every character fits Latin-1, two otherwise) plus its share of the off-heap string
// table, each array's headers and slots, each object's header and properties, each number as
// a heap number. A property named by a key outside `sharedKeys` also pays for its key string
// and for the hidden class (map and descriptor) an object of unique keys gets of its own.
// heap-charge.test.ts measures the heap's growth against the charge.
// Pure: a walk over plain JSON data, nothing changed.

/** Bytes of one pointer slot (a property value, an array element). */
export const SLOT = 8;
/** Bytes of a string's header (map, hash, length) and of its off-heap string-table entry with slack. */
export const STRING_OVERHEAD = 32;
/** Bytes of a heap number (map and double): a number is charged as one whether or not V8 boxes it. */
export const NUMBER = 16;
/** Bytes of an array: the JSArray (map, properties, elements, length) and its elements' header. */
export const ARRAY_OVERHEAD = 48;
/** Bytes of an object: the JSObject (map, properties, elements), its in-object slack and a property array header. */
export const OBJECT_OVERHEAD = 72;
/**
 * Bytes of one property under a shared key: its slot and its slack in a fast object, or its
 * share of a dictionary (key, value, details, at a load factor of two) in an object past
 * DICTIONARY_AFTER properties.
 */
export const PROPERTY = 16;
export const DICTIONARY_PROPERTY = 72;
/** Properties past which an object is charged as a dictionary (V8 leaves fast mode at ~128). */
export const DICTIONARY_AFTER = 32;
/** Bytes of the hidden class a property under an unshared key adds: a map and its descriptor. */
export const UNSHARED_KEY = 112;

/** The charge of string `s` alone (the slot holding it is its holder's): header, table entry and characters rounded up to 8. */
export function stringCharge(s: string): number {
  let width = 1;
  for (let i = 0; i < s.length; i++)
    if (s.charCodeAt(i) > 0xff) {
      width = 2;
      break;
    }
  return STRING_OVERHEAD + Math.ceil((s.length * width) / 8) * 8;
}

/**
 * The heap charge of `value` (plain JSON data as JSON.parse makes it), in bytes: never less
 * than what V8 holds for it (heap-charge.test.ts). Keys in `sharedKeys` (default: none) are
 * taken as shared with other objects of the same shape (a schema's field names), so only
 * their slot is charged; any other key is charged as unique. Iterative, so any depth is walked.
 */
export function heapCharge(value: unknown, sharedKeys: ReadonlySet<string> = new Set()): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += stringCharge(v);
    else if (typeof v === 'number') total += NUMBER;
    else if (Array.isArray(v)) {
      total += ARRAY_OVERHEAD + SLOT * v.length;
      for (const item of v as unknown[]) stack.push(item);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      const perProperty = keys.length > DICTIONARY_AFTER ? DICTIONARY_PROPERTY : PROPERTY;
      total += OBJECT_OVERHEAD + perProperty * keys.length;
      for (const k of keys) {
        if (!sharedKeys.has(k)) total += stringCharge(k) + UNSHARED_KEY;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return total;
}
