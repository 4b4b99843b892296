// ConversionReviews as the apiserver (or anyone who reaches the webhook) sends them, for the
// tests and benchmarks that post them to /convert themselves: a review of any objects, a
// valid minimal spec at each served version, and the hostile review whose one object's
// status.conditions is a long run of zeros (each element a value the webhook's bounds must
// count before they refuse it), built by text replacement so millions of zeros cost no JSON walk.

import { GROUP } from '../../api/schema/common.ts';

/** A valid minimal AITask spec at each served version (a Noop on Deployment `web`). */
export const MINIMAL_SPECS = {
  v1alpha1: { target: 'web', threshold: 80, action: 'Noop' },
  v1: { targetDeployment: 'web', threshold: 0.8, action: 'noop' },
  v2: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 0.8 },
    remediation: { action: 'Noop' },
  },
} as const;

/** A version the webhook converts from and to. */
export type ServedVersion = keyof typeof MINIMAL_SPECS;

/** The JSON of a ConversionReview `uid` asking for `objects` at `desired` (a version of GROUP, e.g. `v2`). */
export function conversionReview(uid: string, desired: string, objects: readonly unknown[]): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: `${GROUP}/${desired}`, objects },
  });
}

/** What zerosReview builds. */
export interface ZerosReview {
  /** The review's uid. */
  readonly uid: string;
  /** The object's version, with MINIMAL_SPECS[from] as its spec. */
  readonly from: ServedVersion;
  /** The version asked for. */
  readonly desired: string;
  /** The object's namespace. */
  readonly namespace: string;
  /** How many zeros status.conditions holds (at least 1): 2 bytes each. */
  readonly zeros: number;
}

/** The JSON of a review of one AITask `hostile` whose status.conditions is `zeros` zeros. */
export function zerosReview(o: ZerosReview): string {
  const head = conversionReview(o.uid, o.desired, [
    {
      apiVersion: `${GROUP}/${o.from}`,
      kind: 'AITask',
      metadata: { name: 'hostile', namespace: o.namespace, uid: 'u-hostile' },
      spec: MINIMAL_SPECS[o.from],
      status: { conditions: ['HOLE'] },
    },
  ]);
  return head.replace('["HOLE"]', `[${'0,'.repeat(o.zeros - 1)}0]`);
}
