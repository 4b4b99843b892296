// A local OpenAI-compatible chat-completions server for integration tests (node:http): it
// checks requests as the real API does (POST, JSON body with model and messages, 400 with an
// OpenAI error body otherwise), records every request it receives (headers and raw body),
// and answers from a script the test controls — a JSON answer, raw content, an HTTP error,
// or a delay longer than the client's timeout.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer. */
export type LLMReply =
  /** 200 with this object, JSON-encoded, as the assistant message's content. */
  | { readonly json: unknown }
  /** 200 with this exact assistant message content. */
  | { readonly content: string }
  /** This HTTP status with an OpenAI error body. */
  | { readonly status: number; readonly message?: string }
  /** Waits this long before answering with `then`. */
  | { readonly delayMs: number; readonly then: LLMReply };

/** A request the server received. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A running server. */
export interface LLMServer {
  /** Base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  /** The chat-completions URL: `${url}/v1/chat/completions`. */
  readonly endpoint: string;
  /** Every request received so far, in order (invalid ones included). */
  readonly requests: readonly RecordedRequest[];
  /** Sets the answer to every following request. */
  reply(r: LLMReply): void;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function error(
  res: http.ServerResponse,
  status: number,
  message: string,
  type = 'invalid_request_error',
): void {
  send(res, status, { error: { message, type, param: null, code: null } });
}

/** Starts a server on a free port of 127.0.0.1 answering `initial` until told otherwise. */
export async function startLLMServer(initial: LLMReply): Promise<LLMServer> {
  const requests: RecordedRequest[] = [];
  let current = initial;
  let seq = 0;
  const answer = async (res: http.ServerResponse, reply: LLMReply, model: string): Promise<void> => {
    if ('delayMs' in reply) {
      await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
      return answer(res, reply.then, model);
    }
    if ('status' in reply) {
      error(res, reply.status, reply.message ?? 'The server had an error', 'server_error');
      return;
    }
    const content = 'json' in reply ? JSON.stringify(reply.json) : reply.content;
    seq += 1;
    send(res, 200, {
      id: `chatcmpl-test-${seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url !== '/v1/chat/completions') {
        error(res, 404, `Unknown path ${req.url ?? ''}`);
        return;
      }
      if (req.method !== 'POST') {
        error(res, 405, 'Method not allowed');
        return;
      }
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
        error(res, 400, 'Content-Type must be application/json');
        return;
      }
      let doc: { model?: unknown; messages?: unknown };
      try {
        doc = JSON.parse(body) as typeof doc;
      } catch {
        error(res, 400, 'We could not parse the JSON body of your request.');
        return;
      }
      if (typeof doc.model !== 'string') {
        error(res, 400, 'you must provide a model parameter');
        return;
      }
      if (!Array.isArray(doc.messages) || doc.messages.length === 0) {
        error(res, 400, "'messages' is a required property");
        return;
      }
      void answer(res, current, doc.model);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    endpoint: `${url}/v1/chat/completions`,
    requests,
    reply(r) {
      current = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
