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
 * port is picked (so no duplicates), then closed. A port can in theory be taken by another
 * process before the component binds it; the component then exits early and startup fails
 * with its log tail. No retries.
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
