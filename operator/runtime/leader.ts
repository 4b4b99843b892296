// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a lease is
// taken over only after its record stayed unchanged for leaseDuration as seen by this
// process's own clock (no trust in other clocks), writes are bound to the resourceVersion,
// the leader renews every retryPeriod and gives up if it cannot renew within renewDeadline,
// and a graceful stop releases the lease so a standby takes over at once.

import { AlreadyExistsError, NotFoundError } from '../../api/kube/errors.ts';
import type { ResourceClient } from '../../api/kube/resources.ts';
import { microTime, type Lease } from './kinds.ts';
import type { Logger } from '../../api/log.ts';

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

/** Campaigns for, holds and releases one Lease. */
export class LeaderElector {
  readonly #o: Required<LeaderElectionOptions>;
  #observed = { record: '', at: 0 };
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
    const { leaseDurationMs: l, renewDeadlineMs: r, retryPeriodMs: p } = this.#o;
    if (!(l > r && r > p && p > 0))
      throw new Error(
        `leader election needs lease duration (${l} ms) > renew deadline (${r} ms) > retry period (${p} ms) > 0`,
      );
  }

  /** True while this process holds the Lease. */
  get leading(): boolean {
    return this.#leading;
  }

  /**
   * Resolves once this process leads; then renews in the background and calls `onLost` if a
   * renewal does not succeed within the renew deadline. Rejects if `stop()` comes first.
   */
  async acquire(onLost: () => void): Promise<void> {
    while (!this.#stopped) {
      if (await this.#tryAcquireOrRenew()) {
        this.#leading = true;
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
      const lease = await this.#o.leases.get(this.#o.namespace, this.#o.name);
      if (lease.spec.holderIdentity !== this.#o.identity) return;
      const now = microTime(new Date());
      await this.#o.leases.replace(this.#o.namespace, this.#o.name, {
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
        const ok = await this.#tryAcquireOrRenew();
        const now = Date.now();
        if (ok || now - lastRenew < this.#o.renewDeadlineMs) {
          this.#renewLoop(onLost, ok ? now : lastRenew);
          return;
        }
        this.#leading = false;
        this.#o.log.error('lost the leader lease', { lease: `${this.#o.namespace}/${this.#o.name}` });
        onLost();
      })();
    }, this.#o.retryPeriodMs);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { leases, namespace, name, identity, leaseDurationMs } = this.#o;
    const now = new Date();
    const durationSeconds = Math.ceil(leaseDurationMs / 1000);
    let lease: Lease;
    try {
      lease = await leases.get(namespace, name);
    } catch (err) {
      if (!(err instanceof NotFoundError)) return this.#failed(err);
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
        () => true,
        (e: unknown) => (e instanceof AlreadyExistsError ? false : this.#failed(e)),
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
      const updated = await leases.replace(namespace, name, { ...lease, spec });
      this.#observed = { record: JSON.stringify(updated.spec), at: now.getTime() };
      return true;
    } catch (err) {
      return this.#failed(err);
    }
  }

  #failed(err: unknown): false {
    this.#o.log.debug('lease update failed', { error: (err as Error).message });
    return false;
  }
}
