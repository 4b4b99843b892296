// Free TCP ports (on 127.0.0.1 unless told otherwise) for the control-plane components,
// npm start and the tests, so several clusters (parallel test files, a persistent CLI
// cluster) never collide on fixed ports.
import { createServer, type Server } from 'node:net';

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const addr = server.address();
      if (addr === null || typeof addr === 'string') reject(new Error('no TCP address'));
      else resolve(addr.port);
    });
  });
}

/**
 * Returns `count` distinct free ports on `host` (default 127.0.0.1). All listeners are held open until every
 * port is picked (so no duplicates), then closed, so another process can take a port before
 * its user binds it: the test harness starts a control-plane component that lost its port
 * again on newly chosen ones (test/harness/port-retry.ts, bounded attempts); a server of our
 * own should rather listen on port 0 and report the port it got.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(servers.map((s) => listen(s, host)));
  } finally {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.listening)
              s.close(() => {
                resolve();
              });
            else resolve();
          }),
      ),
    );
  }
}
