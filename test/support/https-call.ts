// One HTTPS request from a test to a server of ours on loopback, trusting only the CA the
// test made (the webhook's, the operator's metrics certificate): the status, headers and body as
// text. No agent, so no connection outlives the call.

import type { IncomingHttpHeaders } from 'node:http';
import * as https from 'node:https';

/** How to call: method (default GET, POST when there is a body), headers, body, and the CA to trust. */
export interface HttpsCall {
  readonly ca: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Loopback address the connection comes from (127.0.0.2, …: another peer); default the system's choice. */
  readonly localAddress?: string;
}

/** Sends the request to `127.0.0.1:port` `path`; resolves with the status, headers and body, rejects on a connection error. */
export function httpsCall(
  port: number,
  path: string,
  call: HttpsCall,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: call.method ?? (call.body === undefined ? 'GET' : 'POST'),
        ca: call.ca,
        servername: 'localhost',
        agent: false,
        headers: { ...call.headers },
        ...(call.localAddress !== undefined ? { localAddress: call.localAddress } : {}),
      },
      (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    // A server that answers before reading the whole body (413) may close the connection while
    // the body is still going out: once its answer is in, that broken pipe is not an error.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (answered && (err.code === 'EPIPE' || err.code === 'ECONNRESET')) return;
      reject(err);
    });
    req.end(call.body);
  });
}
