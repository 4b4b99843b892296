// A non-loopback address that belongs to the test alone, for what refuses loopback (the
// apiserver's service proxy dials no 127.0.0.0/8 endpoint): a veth pair the test makes, both
// ends in this network namespace and on no bridge (so nothing is forwarded through it; a veth,
// as the real node's link, because kernels without the dummy module have it), with one address
// of TEST-NET-2 (198.51.100.0/24, documentation addresses) as a /32, removed when the test
// ends. An address the machine holds or reaches on a link (a sandbox may number its own network
// from a documentation block: one here uses TEST-NET-1) is never taken, so the test never
// shadows a real neighbour; tests never dial the machine's own interfaces' addresses. The
// link's name carries the address's last octet, so creating the link is the lock: two
// processes never hold one address.
import { run } from '../../scripts/lib/run.ts';

/** A test link and its address, held until `remove`. */
export interface TestNetAddress {
  /** 198.51.100.N, on `link` only. */
  readonly ip: string;
  readonly link: string;
  /** Deletes the link (its peer and its address with it); idempotent. */
  remove(): void;
}

/** The link holding 198.51.100.`octet`; its peer's name adds `p` (Linux allows 15 characters). */
export const linkName = (octet: number): string => `aiops-tnet${octet}`;

/**
 * Whether the kernel would send to `ip` through a gateway (or has no route to it): then the
 * machine neither holds it nor has a neighbour on it. `ip route get` looks the route up only.
 */
function onlyViaGateway(ip: string): boolean {
  let route: string;
  try {
    route = run('ip', ['-4', '-o', 'route', 'get', ip]);
  } catch {
    return true;
  }
  return / via /.test(route) && !/^(local|broadcast) /.test(route);
}

/**
 * Makes a veth link (peer `<link>p`) holding 198.51.100.N/32, trying N from one derived from
 * this process's pid through the 254 addresses until one the machine does not hold or reach on
 * a link has its link name free; `cleanup` gets its removal (give `t.after`, so it runs on
 * failure too). Needs root (CAP_NET_ADMIN); throws saying why when the link cannot be made: a
 * test that needs it fails, it never skips. No retries otherwise.
 */
export function testNetAddress(cleanup: (fn: () => void) => void): TestNetAddress {
  const first = process.pid % 254;
  for (let i = 0; i < 254; i++) {
    const octet = ((first + i) % 254) + 1;
    const link = linkName(octet);
    const ip = `198.51.100.${octet}`;
    if (!onlyViaGateway(ip)) continue;
    try {
      run('ip', ['link', 'add', link, 'type', 'veth', 'peer', 'name', `${link}p`]);
    } catch (err) {
      if (/File exists/.test((err as Error).message)) continue;
      throw new Error(
        `cannot make the link ${link} for a test address (needs root: CAP_NET_ADMIN): ${(err as Error).message}`,
        { cause: err },
      );
    }
    let removed = false;
    const remove = (): void => {
      if (removed) return;
      removed = true;
      run('ip', ['link', 'del', link]);
    };
    cleanup(remove);
    try {
      run('ip', ['addr', 'add', `${ip}/32`, 'dev', link]);
      run('ip', ['link', 'set', `${link}p`, 'up']);
      run('ip', ['link', 'set', link, 'up']);
    } catch (err) {
      remove();
      throw err;
    }
    return { ip, link, remove };
  }
  throw new Error('every 198.51.100.N test link is taken: remove leftovers with `ip link del aiops-tnetN`');
}
