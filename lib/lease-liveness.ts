// The operator's leader-election Lease as both sides see it: the operator renews it while
// it leads, and `kubectl aiops force-finalize` reads it as evidence whether the operator is
// alive before it removes a finalizer the operator would otherwise handle.

/** Default name of the coordination.k8s.io/v1 Lease the operator holds while leading. */
export const LEADER_LEASE_NAME = 'aiops-operator-leader';

/**
 * coordination.k8s.io/v1 Lease, the one type of it: what the operator's leader election
 * writes and what liveness reads. Times are MicroTime strings; a released Lease may carry
 * nulls.
 */
export interface Lease {
  apiVersion?: 'coordination.k8s.io/v1';
  kind?: 'Lease';
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** What a Lease says about the operator. */
export interface Liveness {
  /**
   * `alive`: held and renewed within its duration; `expired`: held but not renewed in time;
   * `released`: no holder (a leader stepped down); `absent`: no Lease at all.
   */
  verdict: 'alive' | 'expired' | 'released' | 'absent';
  holder?: string;
  renewTime?: string;
  /** Seconds since the last renewal (whole seconds, never negative). */
  secondsSinceRenewal?: number;
  leaseDurationSeconds?: number;
  /** One sentence stating the evidence. */
  message: string;
}

/**
 * Judges a Lease at `now`. A held Lease counts as alive while `renewTime + duration +
 * skewSeconds` (default 5 s of clock skew) is in the future. A Lease without a duration uses
 * 15 s, client-go's default.
 */
export function leaseLiveness(lease: Lease | undefined, now: Date, skewSeconds = 5): Liveness {
  if (lease === undefined)
    return {
      verdict: 'absent',
      message: 'no leader Lease exists: the operator is not running or never started',
    };
  const spec = lease.spec;
  const holder = spec.holderIdentity ?? '';
  const duration = spec.leaseDurationSeconds ?? 15;
  const renewed = spec.renewTime ?? spec.acquireTime ?? undefined;
  const base = {
    ...(holder !== '' ? { holder } : {}),
    ...(renewed !== undefined ? { renewTime: renewed } : {}),
    leaseDurationSeconds: duration,
  };
  const renewedMs = renewed === undefined ? Number.NaN : Date.parse(renewed);
  const since = Number.isNaN(renewedMs)
    ? undefined
    : Math.max(0, Math.floor((now.getTime() - renewedMs) / 1000));
  const timing = since === undefined ? {} : { secondsSinceRenewal: since };
  if (holder === '')
    return {
      verdict: 'released',
      ...base,
      ...timing,
      message: 'the leader Lease has no holder: no operator is leading',
    };
  if (since === undefined)
    return { verdict: 'expired', ...base, message: `the leader Lease held by ${holder} was never renewed` };
  if (since <= duration + skewSeconds)
    return {
      verdict: 'alive',
      ...base,
      ...timing,
      message: `${holder} renewed the leader Lease ${since}s ago (duration ${duration}s): the operator is alive`,
    };
  return {
    verdict: 'expired',
    ...base,
    ...timing,
    message: `${holder} last renewed the leader Lease ${since}s ago (duration ${duration}s): the operator is not running`,
  };
}
