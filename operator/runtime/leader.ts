// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a lease is
// taken over only after its record stayed unchanged for leaseDuration as seen by this
// process's own clock (no trust in other clocks), writes are bound to the resourceVersion,
// the leader renews every retryPeriod and gives up if it cannot renew within renewDeadline,
// and a graceful stop releases the lease so a standby takes over at once. The leader renews
// the copy it last wrote without reading it first (one PUT a retry period while nobody else
// writes the Lease; a conflict sends it back to reading), as client-go does. Every Lease
// request is bounded below the renew deadline, and leadership is judged by this process's
// clock (last successful renewal + renew deadline), so a leader that was partitioned or
// frozen (SIGSTOP, a long GC pause) knows it no longer leads the moment it runs again,
// before any timer or reply tells it so.

import { AlreadyExistsError, NotFoundError } from '../../lib/kube/errors.ts';
import { resourcePath, type ResourceClient } from '../../lib/kube/resources.ts';
import { microTime, type Lease } from './kinds.ts';
import type { Logger } from '../../lib/log.ts';

/** Options of LeaderElector; durations in ms (defaults 15 000 / 10 000 / 2 000, as controller-runtime). */
export interface LeaderElectionOptions {
  readonly leases: ResourceClient<Lease>;
  readonly namespace: string;
  readonly name: string;
  /** Unique id of this process (hostname + random suffix). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly log: Logger;
}

/** The Lease requests of one attempt, each aborted by the attempt's signal. */
interface LeaseCalls {
  get(ns: string, name: string): Promise<Lease>;
  create(ns: string, body: Lease): Promise<Lease>;
  replace(ns: string, name: string, body: Lease): Promise<Lease>;
}

/** Campaigns for, holds and releases one Lease. */
export class LeaderElector {
  readonly #o: Required<LeaderElectionOptions>;
  #observed = { record: '', at: 0 };
  #leading = false;
  /** When (Date.now) the Lease was last acquired or renewed by this process. */
  #renewedAt = 0;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** The Lease as this process last created or renewed it; undefined once a write failed. */
  #mine: Lease | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
    const { leaseDurationMs: l, renewDeadlineMs: r, retryPeriodMs: p } = this.#o;
    if (!(l > r && r > p && p > 0))
      throw new Error(
        `leader election needs lease duration (${l} ms) > renew deadline (${r} ms) > retry period (${p} ms) > 0`,
      );
  }

  /**
   * True while this process holds the Lease: it acquired it and its last successful renewal
   * is less than the renew deadline ago by its own clock. Turns false the moment the deadline
   * passes, even when no renewal attempt has ended yet (a frozen or partitioned process).
   */
  get leading(): boolean {
    return this.#leading && Date.now() - this.#renewedAt < this.#o.renewDeadlineMs;
  }

  /**
   * Each attempt (the leader's optimistic PUT, then, only when it failed, a GET and at most one
   * write) is aborted after this many ms: the renew deadline minus one retry period, so a
   * renewal never outlives the deadline.
   */
  get attemptTimeoutMs(): number {
    return this.#o.renewDeadlineMs - this.#o.retryPeriodMs;
  }

  /**
   * Resolves once this process leads; then renews in the background and calls `onLost` if a
   * renewal does not succeed within the renew deadline. Rejects if `stop()` comes first.
   */
  async acquire(onLost: () => void): Promise<void> {
    while (!this.#stopped) {
      const started = Date.now();
      if (await this.#tryAcquireOrRenew()) {
        this.#leading = true;
        this.#renewedAt = started;
        this.#o.log.info('became leader', {
          lease: `${this.#o.namespace}/${this.#o.name}`,
          identity: this.#o.identity,
        });
        this.#renewLoop(onLost, Date.now());
        return;
      }
      await new Promise((r) => (this.#timer = setTimeout(r, this.#o.retryPeriodMs)));
    }
    throw new Error('leader election stopped before this process became leader');
  }

  /** Stops campaigning/renewing; if leading, releases the Lease (empty holder, 1 s duration). */
  async release(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return;
    this.#leading = false;
    try {
      const leases = this.#bounded(AbortSignal.timeout(this.attemptTimeoutMs));
      const lease = await leases.get(this.#o.namespace, this.#o.name);
      if (lease.spec.holderIdentity !== this.#o.identity) return;
      const now = microTime(new Date());
      await leases.replace(this.#o.namespace, this.#o.name, {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: null,
          leaseDurationSeconds: 1,
          renewTime: now,
          acquireTime: now,
        },
      });
      this.#o.log.info('released leader lease', { lease: `${this.#o.namespace}/${this.#o.name}` });
    } catch (err) {
      this.#o.log.warn('cannot release the leader lease', { error: (err as Error).message });
    }
  }

  #renewLoop(onLost: () => void, lastRenew: number): void {
    this.#timer = setTimeout(() => {
      void (async () => {
        if (this.#stopped) return;
        const started = Date.now();
        const ok = await this.#tryAcquireOrRenew();
        if (ok) this.#renewedAt = started;
        if (ok || Date.now() - lastRenew < this.#o.renewDeadlineMs) {
          this.#renewLoop(onLost, ok ? started : lastRenew);
          return;
        }
        this.#leading = false;
        this.#o.log.error('lost the leader lease', { lease: `${this.#o.namespace}/${this.#o.name}` });
        onLost();
      })();
    }, this.#o.retryPeriodMs);
  }

  /** The Lease API with every request of one attempt aborted by `signal`. */
  #bounded(signal: AbortSignal): LeaseCalls {
    const { leases } = this.#o;
    const path = (ns: string, name?: string): string => resourcePath(leases.type, ns, name);
    return {
      get: (ns: string, name: string) => leases.transport.request<Lease>({ path: path(ns, name), signal }),
      create: (ns: string, body: Lease) =>
        leases.transport.request<Lease>({ method: 'POST', path: path(ns), body, signal }),
      replace: (ns: string, name: string, body: Lease) =>
        leases.transport.request<Lease>({ method: 'PUT', path: path(ns, name), body, signal }),
    };
  }

  /**
   * One attempt. The leader first renews the Lease it last wrote, bound to that write's
   * resourceVersion, without reading it (client-go's optimistic fast path): while nobody else
   * writes the Lease a renewal is one PUT. When that PUT fails (a conflict: someone wrote the
   * Lease since) the attempt goes on as a standby's does: read the Lease, then take or renew it.
   */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const signal = AbortSignal.timeout(this.attemptTimeoutMs);
    const leases = this.#bounded(signal);
    const now = new Date();
    const mine = this.#leading ? this.#mine : undefined;
    if (mine !== undefined) {
      const spec: Lease['spec'] = { ...mine.spec, renewTime: microTime(now) };
      try {
        this.#written(await leases.replace(this.#o.namespace, this.#o.name, { ...mine, spec }), now);
        return true;
      } catch (err) {
        if (signal.aborted) return this.#failed(err, signal);
        this.#o.log.debug('optimistic lease renewal failed; reading the lease', {
          error: (err as Error).message,
        });
      }
    }
    return this.#readThenAcquireOrRenew(leases, signal, now);
  }

  /** The Lease as this process last wrote it, and when its record was observed. */
  #written(lease: Lease, now: Date): void {
    this.#mine = lease;
    this.#observed = { record: JSON.stringify(lease.spec), at: now.getTime() };
  }

  async #readThenAcquireOrRenew(leases: LeaseCalls, signal: AbortSignal, now: Date): Promise<boolean> {
    const { namespace, name, identity, leaseDurationMs } = this.#o;
    const failed = (err: unknown): false => this.#failed(err, signal);
    this.#mine = undefined;
    const durationSeconds = Math.ceil(leaseDurationMs / 1000);
    let lease: Lease;
    try {
      lease = await leases.get(namespace, name);
    } catch (err) {
      if (!(err instanceof NotFoundError)) return failed(err);
      const fresh: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      };
      return leases.create(namespace, fresh).then(
        (created) => {
          this.#written(created, now);
          return true;
        },
        (e: unknown) => (e instanceof AlreadyExistsError ? false : failed(e)),
      );
    }
    const holder = lease.spec.holderIdentity ?? '';
    const record = JSON.stringify(lease.spec);
    if (record !== this.#observed.record) this.#observed = { record, at: now.getTime() };
    const held = holder !== '' && holder !== identity;
    const heldFor = (lease.spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (held && this.#observed.at + heldFor > now.getTime()) return false;
    const spec: Lease['spec'] = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: holder === identity ? (lease.spec.acquireTime ?? microTime(now)) : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (lease.spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
    };
    try {
      this.#written(await leases.replace(namespace, name, { ...lease, spec }), now);
      return true;
    } catch (err) {
      return failed(err);
    }
  }

  #failed(err: unknown, signal: AbortSignal): false {
    if (signal.aborted)
      this.#o.log.warn('lease request aborted: no answer within the attempt bound', {
        boundMs: this.attemptTimeoutMs,
        lease: `${this.#o.namespace}/${this.#o.name}`,
      });
    else this.#o.log.debug('lease update failed', { error: (err as Error).message });
    return false;
  }
}
