// A chat-completions server that routes by model, as OpenAI's does: it knows one model and
// answers every other with 404 model_not_found. The LLM fairness tests (operator/llm/
// advisor.cluster.test.ts, test/attacks/shares.test.ts) show that one tenant's wrong model opens the
// breaker of that model only, and count the requests each model got.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Requests a model-routing server received, by model. */
export type ModelRequests = Map<string, number>;

/**
 * A chat-completions server that knows `known` only, as OpenAI does: any other model gets
 * 404 model_not_found, with an error text carrying escape sequences and a URL with
 * credentials (which must never reach a status); the known one answers ScaleUp advice.
 */
export async function modelServer(
  known: string,
): Promise<{ endpoint: string; requests: ModelRequests; close: () => Promise<void> }> {
  const requests: ModelRequests = new Map();
  const srv = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const model = String((JSON.parse(body) as { model?: unknown }).model);
      requests.set(model, (requests.get(model) ?? 0) + 1);
      const [status, doc] =
        model === known
          ? [
              200,
              {
                id: 'chatcmpl-fair',
                object: 'chat.completion',
                model,
                choices: [
                  {
                    index: 0,
                    message: {
                      role: 'assistant',
                      content: JSON.stringify({
                        action: 'ScaleUp',
                        confidence: 0.9,
                        reason: 'tenant B load',
                      }),
                    },
                    finish_reason: 'stop',
                  },
                ],
              },
            ]
          : [
              404,
              {
                error: {
                  message: `The model ${model} does not exist \u001b]52;c;ZXZpbA==\u0007 see https://admin:hunter2@llm.internal/debug`,
                  type: 'invalid_request_error',
                  param: null,
                  code: 'model_not_found',
                },
              },
            ];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/chat/completions`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}
