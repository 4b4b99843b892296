// The apiserver's own count of requests, read from its /metrics: what fan-out tests assert on
// (how many node GETs or LISTs a command or the operator made), so the figure is the
// server's, not what the client says it sent.

import type { KubeTransport } from '../../lib/kube/transport.ts';

/** Which `apiserver_request_total` series to add up: every label given must match. */
export interface RequestFilter {
  readonly resource: string;
  /** GET, LIST, WATCH, PATCH, … as the apiserver labels them. */
  readonly verb: string;
  /** Subresource, e.g. 'scale' (default: none, the resource itself). */
  readonly subresource?: string;
  /** HTTP status, e.g. '404' (default: any). */
  readonly code?: string;
}

/** Sum of `apiserver_request_total` over the series matching `filter`, read with `admin` (needs /metrics). */
export async function apiserverRequests(admin: KubeTransport, filter: RequestFilter): Promise<number> {
  let sum = 0;
  await admin.stream({ path: '/metrics' }, (line) => {
    if (!line.startsWith('apiserver_request_total{')) return;
    const label = (n: string): string => new RegExp(`[{,]${n}="([^"]*)"`).exec(line)?.[1] ?? '';
    if (label('resource') !== filter.resource || label('subresource') !== (filter.subresource ?? '')) return;
    if (label('verb') !== filter.verb) return;
    if (filter.code !== undefined && label('code') !== filter.code) return;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  });
  return sum;
}
