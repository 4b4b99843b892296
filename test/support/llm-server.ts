// A local OpenAI-compatible chat-completions server for integration tests (node:http): it
// checks requests as the real servers do (POST, JSON body with model and messages, 400 with
// an error body otherwise), with the accept rules of one kind of server (ServerStyle: the
// current OpenAI API with a reasoning model, an older vLLM, Ollama), records every request
// it receives (headers and raw body), and answers from a script the test controls — a JSON
// answer, raw content, an oversized answer, an HTTP error, or a delay longer than the
// client's timeout. Like the real servers it reports token counts in `usage` (counted by
// `countTokens`, a stand-in for a tokenizer), unless told to omit them.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer. */
export type LLMReply =
  /** 200 with this object, JSON-encoded, as the assistant message's content. */
  | { readonly json: unknown }
  /** 200 with this exact assistant message content. */
  | { readonly content: string }
  /** 200 with an assistant message content of this many bytes (a runaway answer). */
  | { readonly oversizedBytes: number }
  /** This HTTP status with an OpenAI error body. */
  | { readonly status: number; readonly message?: string }
  /** Waits this long before answering with `then`. */
  | { readonly delayMs: number; readonly then: LLMReply };

/**
 * Whose accept rules the server applies to a request's optional fields:
 * - `openai`: the current OpenAI API serving a reasoning model: refuses `max_tokens` (use
 *   `max_completion_tokens`) and any `temperature` but 1, refuses unknown fields, and wants
 *   `Authorization: Bearer` when `apiKey` is set (401 otherwise);
 * - `vllm`: an older vLLM: knows `max_tokens`, `temperature`, `response_format` only and
 *   refuses any other field (pydantic's extra_forbidden, HTTP 400), no key needed;
 * - `ollama`: Ollama's OpenAI-compatible API: ignores fields it does not know (so a
 *   `max_completion_tokens` it cannot read is dropped silently), never asks for a key;
 * - `lenient` (default): accepts every field.
 */
export type ServerStyle = 'openai' | 'vllm' | 'ollama' | 'lenient';

/** Options of startLLMServer. */
export interface LLMServerOptions {
  /** Accept rules (default `lenient`). */
  readonly style?: ServerStyle;
  /** `openai` style only: the key every request must carry as a Bearer token. */
  readonly apiKey?: string;
  /** Report `usage` token counts in answers (default true; some servers omit them). */
  readonly usage?: boolean;
}

/** The stand-in's token count of `text`: one token per 4 characters, rounded up. */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text of a request's messages, as counted for `usage.prompt_tokens`. */
function promptText(messages: readonly unknown[]): string {
  return messages
    .map((m) => (m as { content?: unknown }).content)
    .filter((c): c is string => typeof c === 'string')
    .join('');
}

const KNOWN = new Set([
  'model',
  'messages',
  'max_completion_tokens',
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'response_format',
  'seed',
  'user',
  'stream',
]);
/** What an older vLLM knows: the current fields but `max_completion_tokens`. */
const VLLM_OLD = new Set([...KNOWN].filter((f) => f !== 'max_completion_tokens'));

/** Why a server of `style` refuses `doc` (status and message), or undefined when it accepts it. */
function refusal(
  style: ServerStyle,
  doc: Record<string, unknown>,
  auth: string | undefined,
  apiKey: string | undefined,
): { status: number; message: string; param: string | null; code: string | null } | undefined {
  if (style === 'openai') {
    if (apiKey !== undefined && auth !== `Bearer ${apiKey}`)
      return { status: 401, message: 'Incorrect API key provided.', param: null, code: 'invalid_api_key' };
    for (const k of Object.keys(doc))
      if (!KNOWN.has(k))
        return {
          status: 400,
          message: `Unrecognized request argument supplied: ${k}`,
          param: null,
          code: null,
        };
    if ('max_tokens' in doc)
      return {
        status: 400,
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        param: 'max_tokens',
        code: 'unsupported_parameter',
      };
    if ('temperature' in doc && doc['temperature'] !== 1)
      return {
        status: 400,
        message: `Unsupported value: 'temperature' does not support ${JSON.stringify(doc['temperature'])} with this model. Only the default (1) value is supported.`,
        param: 'temperature',
        code: 'unsupported_value',
      };
  }
  if (style === 'vllm')
    for (const k of Object.keys(doc))
      if (!VLLM_OLD.has(k))
        return {
          status: 400,
          message: `[{'type': 'extra_forbidden', 'loc': ('body', '${k}'), 'msg': 'Extra inputs are not permitted'}]`,
          param: null,
          code: null,
        };
  return undefined;
}

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

/**
 * Starts a server on a free port of 127.0.0.1 answering `initial` until told otherwise, to
 * requests its `style` accepts.
 */
export async function startLLMServer(initial: LLMReply, opts: LLMServerOptions = {}): Promise<LLMServer> {
  const style = opts.style ?? 'lenient';
  const requests: RecordedRequest[] = [];
  let current = initial;
  let seq = 0;
  const answer = async (
    res: http.ServerResponse,
    reply: LLMReply,
    model: string,
    prompt: string,
  ): Promise<void> => {
    if ('delayMs' in reply) {
      await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
      return answer(res, reply.then, model, prompt);
    }
    if ('status' in reply) {
      error(res, reply.status, reply.message ?? 'The server had an error', 'server_error');
      return;
    }
    const content =
      'json' in reply
        ? JSON.stringify(reply.json)
        : 'oversizedBytes' in reply
          ? 'x'.repeat(reply.oversizedBytes)
          : reply.content;
    seq += 1;
    send(res, 200, {
      id: `chatcmpl-test-${seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      ...(opts.usage === false
        ? {}
        : {
            usage: {
              prompt_tokens: countTokens(prompt),
              completion_tokens: countTokens(content),
              total_tokens: countTokens(prompt) + countTokens(content),
            },
          }),
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
      let doc: { model?: unknown; messages?: unknown } & Record<string, unknown>;
      try {
        doc = JSON.parse(body) as typeof doc;
      } catch {
        error(res, 400, 'We could not parse the JSON body of your request.');
        return;
      }
      const refused = refusal(style, doc, req.headers.authorization, opts.apiKey);
      if (refused) {
        send(res, refused.status, {
          error: {
            message: refused.message,
            type: 'invalid_request_error',
            param: refused.param,
            code: refused.code,
          },
        });
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
      void answer(res, current, doc.model, promptText(doc.messages as unknown[]));
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
