// The webhook's capacity and who may hold how much of it, as pure bookkeeping the HTTPS
// adapter (server.ts) consults: anyone who reaches the port (any pod can) is a peer, so no
// peer may hold what another needs. Three things are bounded:
// - connections, per remote address and in all: the listener's connection budget
//   (lib/connection-budget.ts), with the defaults here;
// - bytes of requests being read or answered, per remote address and in all (PeerShares.admit):
//   a request reserves its declared size against its address's share only; when the total is
//   full, a request from an address holding less than the biggest holder pushes that holder's
//   newest request out (max-min fairness), so a few addresses that send headers and then
//   stall cannot starve the apiserver;
// - slots (Slots): a ConversionReview takes one, by count and by its actual size, only once its
//   whole body is read, and holds it until its answer is written;
// - bytes of refused bodies being read and dropped before their answer (refusals.ts), per
//   remote address and in all: a PeerShares of their own (drainLimits).
// Deadlines are the adapter's; bodyDeadlineMs says how long a body of a given size may take.

/** Default connections one remote address may hold open at once: 64. */
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = 64;

/**
 * Default connections all remote addresses may hold open at once: 256, four addresses at their
 * share (256 TLS handshakes in progress cost ~16 MiB). When all are held, a connection from an
 * address holding fewer closes the oldest of the address holding the most, so the apiserver
 * keeps a share whatever other addresses hold.
 */
export const DEFAULT_MAX_CONNECTIONS = 256;

/** Default time a connection may go without a byte either way: 30 s. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** Default time a peer has to send its request headers, and to finish its TLS handshake: 5 s. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 5_000;

/** Default fixed part of a body's (and an answer's) deadline: 5 s. */
export const DEFAULT_BODY_TIMEOUT_BASE_MS = 5_000;

/** Default slowest rate a body (or answer) may flow at: 1 MiB/s; slower gets 408 (or is cut). */
export const DEFAULT_MIN_BYTES_PER_SECOND = 1024 * 1024;

/**
 * How long a body (or an answer) of `bytes` may take, in ms: `baseMs` plus the time `bytes`
 * take at `minBytesPerSecond`. Pure.
 */
export function bodyDeadlineMs(bytes: number, baseMs: number, minBytesPerSecond: number): number {
  return baseMs + Math.ceil((Math.max(0, bytes) * 1000) / Math.max(1, minBytesPerSecond));
}

/**
 * Default count of addresses whose refused bodies may be read and dropped at once at their
 * full share: 4, so with the default 8 MiB body limit 16 MiB per address (one refused body of
 * any size) and 64 MiB in all.
 */
export const DEFAULT_DRAINING_ADDRESSES = 4;

/**
 * The drain shares for a body limit of `maxBody` bytes: twice the limit per address (the most
 * one refused body is read for), DEFAULT_DRAINING_ADDRESSES times that in all.
 */
export function drainLimits(maxBody: number): PeerLimits {
  return { maxBytesPerPeer: 2 * maxBody, maxBytes: DEFAULT_DRAINING_ADDRESSES * 2 * maxBody };
}

/** Limits of PeerShares. */
export interface PeerLimits {
  /** Declared bytes one address's requests may hold at once; a request alone of its address always fits. */
  readonly maxBytesPerPeer: number;
  /** Declared bytes all requests may hold at once (≥ maxBytesPerPeer). */
  readonly maxBytes: number;
}

/** Why PeerShares refused a request. */
export type ShareRefusal = 'peer_share' | 'overloaded';

interface Hold {
  readonly peer: string;
  readonly bytes: number;
  readonly evict: () => void;
}

/** Per-address shares of the bytes held by requests (see the module comment). */
export class PeerShares {
  readonly #limits: PeerLimits;
  /** Each address's holds, oldest first. */
  readonly #holds = new Map<string, Hold[]>();
  readonly #peerBytes = new Map<string, number>();
  #total = 0;

  constructor(limits: PeerLimits) {
    this.#limits = {
      maxBytesPerPeer: limits.maxBytesPerPeer,
      maxBytes: Math.max(limits.maxBytes, limits.maxBytesPerPeer),
    };
  }

  /** Bytes held in all now. */
  get bytes(): number {
    return this.#total;
  }

  /** Bytes `peer` holds now. */
  bytesOf(peer: string): number {
    return this.#peerBytes.get(peer) ?? 0;
  }

  /**
   * Reserves `bytes` for a request of `peer`. Returns its release (idempotent), or why it is
   * refused: `peer_share` when the address would hold more than its share, `overloaded` when
   * pushing out what holders above it hold cannot make room (then nobody is pushed out). To
   * make room, the newest requests of the addresses holding the most (more than `peer` would)
   * are released and their `evict` called, biggest holder first.
   */
  admit(peer: string, bytes: number, evict: () => void): (() => void) | ShareRefusal {
    const mine = this.bytesOf(peer);
    if (mine > 0 && mine + bytes > this.#limits.maxBytesPerPeer) return 'peer_share';
    const victims = this.#victims(peer, mine + bytes, this.#total + bytes - this.#limits.maxBytes);
    if (victims === undefined) return 'overloaded';
    for (const v of victims) {
      this.#release(v);
      v.evict();
    }
    const hold: Hold = { peer, bytes, evict };
    const list = this.#holds.get(peer) ?? [];
    list.push(hold);
    this.#holds.set(peer, list);
    this.#peerBytes.set(peer, mine + bytes);
    this.#total += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(hold);
    };
  }

  /**
   * The requests to push out so `need` bytes come free for `peer`, which would then hold
   * `level`: the newest of whoever holds the most above `level`, one at a time. Undefined when
   * that cannot free enough, so a refusal pushes nobody out.
   */
  #victims(peer: string, level: number, need: number): Hold[] | undefined {
    if (need <= 0) return [];
    const left = new Map<string, number>();
    for (const [p, b] of this.#peerBytes) if (p !== peer && b > level) left.set(p, b);
    const taken = new Map<string, number>();
    const out: Hold[] = [];
    let freed = 0;
    while (freed < need) {
      let victim: string | undefined;
      let most = level;
      for (const [p, b] of left)
        if (b > most) {
          victim = p;
          most = b;
        }
      if (victim === undefined) return undefined;
      const holds = this.#holds.get(victim) ?? [];
      const n = taken.get(victim) ?? 0;
      const newest = holds[holds.length - 1 - n];
      if (newest === undefined) return undefined;
      taken.set(victim, n + 1);
      left.set(victim, most - newest.bytes);
      out.push(newest);
      freed += newest.bytes;
    }
    return out;
  }

  #release(hold: Hold): void {
    const list = this.#holds.get(hold.peer);
    const i = list?.indexOf(hold) ?? -1;
    if (list === undefined || i < 0) return;
    list.splice(i, 1);
    const left = (this.#peerBytes.get(hold.peer) ?? 0) - hold.bytes;
    if (list.length === 0) {
      this.#holds.delete(hold.peer);
      this.#peerBytes.delete(hold.peer);
    } else this.#peerBytes.set(hold.peer, left);
    this.#total -= hold.bytes;
  }
}

/** What Slots reports its level to (the in-flight gauges). */
export interface SlotGauges {
  readonly count: { inc(): void; dec(): void };
  readonly bytes: { inc(v: number): void; dec(v: number): void };
}

/**
 * The cap on reviews being converted or answered, by count and by bytes. A review that is
 * alone is always admitted (up to the body limit), so a budget below the body limit cannot
 * refuse everything.
 */
export class Slots {
  #count = 0;
  #bytes = 0;
  readonly #maxCount: number;
  readonly #maxBytes: number;
  readonly #gauges: SlotGauges;

  constructor(maxCount: number, maxBytes: number, gauges: SlotGauges) {
    this.#maxCount = Math.max(1, maxCount);
    this.#maxBytes = maxBytes;
    this.#gauges = gauges;
  }

  /** Takes a slot for a review of `bytes`, returning its release (idempotent), or undefined when over the cap. */
  enter(bytes: number): (() => void) | undefined {
    if (this.#count >= this.#maxCount) return undefined;
    if (this.#count > 0 && this.#bytes + bytes > this.#maxBytes) return undefined;
    this.#count++;
    this.#bytes += bytes;
    this.#gauges.count.inc();
    this.#gauges.bytes.inc(bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#count--;
      this.#bytes -= bytes;
      this.#gauges.count.dec();
      this.#gauges.bytes.dec(bytes);
    };
  }
}
