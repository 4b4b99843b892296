// The byte bounds on what the transport reads from the apiserver: a request's whole answer
// and each line of a watch stream are collected up to a bound, and past it the read stops
// with ResponseTooLargeError keeping only the body's first bytes. No answer can then grow the
// process past its memory limit or a string past V8's length limit. Pure accumulators; the
// transport owns the sockets and closes the one whose body was refused.

import { ApiError } from './errors.ts';

/**
 * Largest answer body `request` reads unless told otherwise, in bytes: 32 MiB. It holds the
 * largest JSON one stored object can be sent as (resources.ts MAX_OBJECT_JSON_BYTES, ~9 MiB)
 * and a list page sized by ResourceClient's page budget (16 MiB of objects), each with room
 * to spare, while staying far below V8's string limit (~512 MiB) and a few percent of the
 * shipped 384 MiB memory limit.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * Largest line `stream` reads unless told otherwise, in bytes: 10 MiB, one watch event of the
 * largest JSON a stored object can be sent as (resources.ts MAX_OBJECT_JSON_BYTES, ~9 MiB)
 * with its framing.
 */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Bytes of a refused body kept in ResponseTooLargeError's `head`: 4 KiB. */
export const RESPONSE_HEAD_BYTES = 4096;

/**
 * A body (of a request, or one line of a stream) past its byte bound: the read stopped there
 * and the connection was closed. The request's error, never retried by the transport; the
 * caller may ask again for less (a smaller page) or refuse what it asked for.
 */
export class ResponseTooLargeError extends ApiError {
  /** The bound that was passed, in bytes. */
  readonly maxBytes: number;
  /** The first RESPONSE_HEAD_BYTES bytes of the body, as UTF-8 (a code point cut at the end reads as U+FFFD). */
  readonly head: string;
  constructor(path: string, maxBytes: number, head: string, what: string) {
    const message = `${what} of ${path} is larger than ${maxBytes} bytes; not read`;
    super(0, { message, reason: 'ResponseTooLarge' }, message);
    this.maxBytes = maxBytes;
    this.head = head;
  }
}

/** The chunks of one answer body, at most `maxBytes` bytes in all, decoded once whole. */
export class AnswerBody {
  /** The bound, in bytes. */
  readonly maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Adds a chunk; false (and nothing more kept than the head) once the body is past `maxBytes`. */
  push(chunk: Buffer): boolean {
    if (this.#size + chunk.length > this.maxBytes) {
      this.#chunks.push(chunk.subarray(0, Math.max(0, RESPONSE_HEAD_BYTES - this.#size)));
      this.#size = this.maxBytes + 1;
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return true;
  }

  /** The first RESPONSE_HEAD_BYTES bytes, as UTF-8. */
  head(): string {
    return headOf(this.#chunks);
  }

  /** The whole body, as UTF-8. */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** The first RESPONSE_HEAD_BYTES bytes of `chunks`, as UTF-8. */
function headOf(chunks: readonly Buffer[]): string {
  const out: Buffer[] = [];
  let n = 0;
  for (const c of chunks) {
    if (n >= RESPONSE_HEAD_BYTES) break;
    const part = c.subarray(0, RESPONSE_HEAD_BYTES - n);
    out.push(part);
    n += part.length;
  }
  return Buffer.concat(out).toString('utf8');
}

/** A line past LineReader's bound: its first bytes. */
export class LineTooLong extends Error {
  /** The bound that was passed, in bytes. */
  readonly maxBytes: number;
  /** The line's first RESPONSE_HEAD_BYTES bytes, as UTF-8. */
  readonly head: string;
  constructor(maxBytes: number, head: string) {
    super(`line longer than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
    this.head = head;
  }
}

/**
 * Splits a byte stream into newline-terminated UTF-8 lines of at most `maxBytes` bytes each
 * (the newline not counted); a longer line throws LineTooLong. Lines are cut on bytes: a
 * newline byte is never part of a multi-byte UTF-8 sequence.
 */
export class LineReader {
  /** The bound on one line, in bytes. */
  readonly maxBytes: number;
  #parts: Buffer[] = [];
  #size = 0;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** The lines `chunk` completes, in order; the rest is kept for the next chunk. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (this.#size + piece.length > this.maxBytes)
        throw new LineTooLong(this.maxBytes, headOf([...this.#parts, piece]));
      if (piece.length > 0) this.#parts.push(piece);
      this.#size += piece.length;
      if (nl < 0) return lines;
      lines.push(Buffer.concat(this.#parts, this.#size).toString('utf8'));
      this.#parts = [];
      this.#size = 0;
      start = nl + 1;
    }
  }
}
