// A response body read up to a byte limit: the answers of servers the operator asks
// (Prometheus, an LLM endpoint) are collected chunk by chunk, and one past the limit stops
// the read, so a runaway or hostile server cannot make the operator hold its whole answer
// in memory. Pure accumulator; the caller owns the stream and aborts it when `push` refuses.

/** Default largest body the operator reads from a server it queries: 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** Collects the chunks of one response body, at most `maxBytes` bytes in all. */
export class BoundedBody {
  /** The limit, in bytes. */
  readonly maxBytes: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  /** `maxBytes`: the largest body accepted, in bytes (default DEFAULT_MAX_RESPONSE_BYTES). */
  constructor(maxBytes: number = DEFAULT_MAX_RESPONSE_BYTES) {
    this.maxBytes = maxBytes;
  }

  /**
   * Adds one chunk; false when the body is now over the limit (the chunk is not kept and
   * the caller stops reading). Once over, every later push is refused too.
   */
  push(chunk: Uint8Array): boolean {
    this.#size += chunk.byteLength;
    if (this.#size > this.maxBytes) return false;
    this.#chunks.push(chunk);
    return true;
  }

  /** The body so far, decoded as UTF-8. */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/**
 * Reads a web stream (a fetch Response's body) through a BoundedBody: the text, or
 * `undefined` when it is over `maxBytes` (the stream is then cancelled, which closes the
 * connection). A null body reads as ''.
 */
export async function readBounded(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number = DEFAULT_MAX_RESPONSE_BYTES,
): Promise<string | undefined> {
  const body = new BoundedBody(maxBytes);
  if (stream === null) return '';
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return body.text();
    if (!body.push(value)) {
      await reader.cancel();
      return undefined;
    }
  }
}
