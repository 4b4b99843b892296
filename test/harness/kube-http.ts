// A minimal HTTPS client for the harness' own calls to kube-apiserver (readiness, creating
// the fake nodes, checking they are Ready), authenticated with the admin client cert. Kept
// to node:https so the harness does not depend on the client library under test.
import { Agent, request } from 'node:https';

/** TLS material for talking to the apiserver (PEM strings). */
export interface KubeTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** Result of one request: HTTP status and the raw body. */
export interface KubeResponse {
  readonly status: number;
  readonly body: string;
}

/** One apiserver endpoint plus credentials. Call `close()` to drop kept-alive sockets. */
export interface KubeHttp {
  request(method: string, path: string, body?: unknown): Promise<KubeResponse>;
  close(): void;
}

/**
 * A client for `server` (e.g. https://127.0.0.1:6443). Each request times out after
 * `timeoutMs` (default 5000 ms) and rejects on network errors; no retries (callers poll).
 */
export function kubeHttp(server: string, tls: KubeTls, timeoutMs = 5000): KubeHttp {
  const agent = new Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
  return {
    request(method, path, body) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = request(
          new URL(path, server),
          {
            method,
            agent,
            timeout: timeoutMs,
            headers: {
              accept: 'application/json',
              ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => {
              chunks.push(c);
            });
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
            });
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout after ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(payload);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** GET `url` (http or https, certificate not verified: local component health ports) and return the status; 0 on error. */
export async function probe(url: string, timeoutMs = 2000): Promise<number> {
  const mod = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve) => {
    const req = mod.get(url, { timeout: timeoutMs, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('timeout', () => {
      req.destroy();
    });
    req.on('error', () => {
      resolve(0);
    });
  });
}
