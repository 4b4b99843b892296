// Attack on what the advisor learns about an LLM server: mallory points her
// task at the shared endpoint with a model named so that the server's error text names
// `response_format` (`The model "response_format-7b" does not exist`), which reads like a
// refusal of structured output. Before, the advisor then dropped structured output for the
// whole endpoint, every model and namespace, for good; alice's model, which answers advice
// only when asked for the schema, then answered prose, and her breaker opened. Now a shape is
// learned per endpoint, model and namespace: alice's requests still carry the schema and
// her advice arrives. Played against the operator under the CSV's RBAC on a stage of the
// suite's own, with a real HTTP chat-completions stand-in on loopback.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { eventually } from '../support/operator.ts';
import { askingLLM, startStage, type Stage, type Tenant, stopStarted } from './stage.ts';

const KNOWN = 'test-model';
const HOSTILE = 'response_format-7b';

/** The `response_format.type` of each request a model got ('none' without one). */
const formats = new Map<string, string[]>();

/**
 * A chat-completions server that knows KNOWN only and answers any other model 400 with an
 * error naming it. KNOWN answers advice when asked for structured output and prose otherwise,
 * as a model without a grammar does.
 */
function server(): http.Server {
  return http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const doc = JSON.parse(body) as { model?: unknown; response_format?: { type?: unknown } };
      const model = String(doc.model);
      const format = typeof doc.response_format?.type === 'string' ? doc.response_format.type : 'none';
      formats.set(model, [...(formats.get(model) ?? []), format]);
      const content =
        format === 'none'
          ? 'Looking at the metrics, I would scale the deployment up.'
          : JSON.stringify({ action: 'ScaleUp', confidence: 0.9, reason: 'load' });
      const [status, answer] =
        model === KNOWN
          ? [
              200,
              {
                id: 'chatcmpl-shape',
                object: 'chat.completion',
                model,
                choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
              },
            ]
          : [
              400,
              {
                error: {
                  message: `The model \`${model}\` does not exist`,
                  type: 'invalid_request_error',
                  param: null,
                  code: 'model_not_found',
                },
              },
            ];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
}

let stage: Stage;
let llm: http.Server;
let endpoint = '';

before(async () => {
  llm = server();
  await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1/chat/completions`;
  stage = await startStage(() => undefined, {
    args: [`--llm-endpoint-allowlist=${new URL(endpoint).origin}/v1/`],
  });
});
after(async () => {
  await stopStarted(stage, {
    stop: async () => {
      llm.closeAllConnections();
      await new Promise<void>((resolve) => llm.close(() => resolve()));
    },
  });
});

const condition = async (tenant: Tenant, name: string) =>
  findCondition((await tenant.tasks.get(tenant.namespace, name)).status?.conditions, 'LLMAvailable');

test("mallory's model whose error names response_format lowers no request of alice's: her advice arrives with the schema", async () => {
  const { mallory, alice } = stage;
  await askingLLM(stage, mallory, 'm', { endpoint, model: HOSTILE });
  await eventually(
    "mallory's requests stepped down to no response_format",
    () => (formats.get(HOSTILE)?.includes('none') === true ? true : undefined),
    90_000,
  );

  await askingLLM(stage, alice, 'fair', { endpoint, model: KNOWN });
  const advised = await eventually(
    "alice's advice",
    async () => {
      const c = await condition(alice, 'fair');
      if (c?.reason === 'LLMAdvice') return c;
      throw new Error(
        `LLMAvailable ${c?.reason ?? 'unset'}: ${c?.message ?? ''}; her requests' formats ${JSON.stringify(formats.get(KNOWN) ?? [])}`,
      );
    },
    90_000,
  );
  assert.equal(advised.status, 'True');
  const hers = formats.get(KNOWN) ?? [];
  assert.ok(hers.length > 0);
  assert.deepEqual(
    hers.filter((f) => f !== 'json_schema'),
    [],
    'every request of alice asks for the schema',
  );
});
