// A real OpenAI-compatible inference server for the LLM advisor's tests: llama-cpp-python's
// server (installed by test/support/llama/install.sh into a virtualenv under the harness cache,
// as .ci/run does) serving a model written at test time by test/support/llama/make_model.py
// (random weights from a fixed seed, byte vocabulary, chat template). It listens on a free
// port of 127.0.0.1 only, as a child of this process (killed when it exits, so no orphan), and
// is stopped by `stop`; `kill` SIGKILLs it to play a server that dies.

import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePorts } from '../../scripts/lib/ports.ts';
import { cacheDir } from '../harness/paths.ts';
import { spawnComponent, type Component } from '../harness/process.ts';
import { awaitBuild } from '../harness/pending-builds.ts';
import { skipUnlessRequired } from '../harness/required.ts';
import { waitFor } from '../harness/wait.ts';

/** The llama-cpp-python release install.sh installs (its venv is named after it). */
export const LLAMA_CPP_PYTHON_VERSION = '0.3.36';

/** CI's variable that makes a missing llama-cpp-python server a failure instead of a skip. */
export const REQUIRE_LLM_SERVER = 'AIOPS_REQUIRE_LLM_SERVER';

const here = dirname(fileURLToPath(import.meta.url));
/** The install script (idempotent; prints the venv's python). */
export const INSTALL_SCRIPT = join(here, 'llama', 'install.sh');
const MAKE_MODEL = join(here, 'llama', 'make_model.py');

/** The venv's python: `<cacheDir>/llama-cpp-python-<version>/bin/python`. */
export function llamaPython(): string {
  return join(cacheDir(), `llama-cpp-python-${LLAMA_CPP_PYTHON_VERSION}`, 'bin', 'python');
}

/** Why the real server cannot run here (undefined when it can): the venv or its stamp is missing. */
export function llamaServerMissing(): string | undefined {
  awaitBuild('llama');
  const stamp = join(dirname(dirname(llamaPython())), '.aiops-installed');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').startsWith(`${LLAMA_CPP_PYTHON_VERSION} `))
    return undefined;
  return `llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} is not installed (run ${INSTALL_SCRIPT})`;
}

/**
 * The skip reason for a suite on the real server, or undefined when it can run; throws when
 * AIOPS_REQUIRE_LLM_SERVER is set and the server is missing (CI never skips it).
 */
export function llamaServerSkip(): string | undefined {
  return skipUnlessRequired(REQUIRE_LLM_SERVER, llamaServerMissing());
}

/** Options of startLlamaServer. */
export interface LlamaServerOptions {
  /** Model name the server answers to (`--model_alias`, default `aiops-test-random`). */
  readonly model?: string;
  /** Context window in tokens (default 2048: a byte-level prompt is ~1,000 tokens). */
  readonly nCtx?: number;
  /** Seed of the model's weights (default 26). */
  readonly seed?: number;
}

/** A running server. */
export interface LlamaServer {
  /** Base URL, http://127.0.0.1:PORT. */
  readonly url: string;
  /** `${url}/v1/chat/completions`. */
  readonly endpoint: string;
  /** The name it serves the model under. */
  readonly model: string;
  /** The server process's log (stdout and stderr). */
  readonly logPath: string;
  /** SIGTERM, SIGKILL after 5 s; removes the model and log directory. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL now, as a crash would; the directory stays for the log. */
  kill(): Promise<void>;
  /** SIGSTOP: the process stops reading, while the kernel still accepts connections and requests. */
  freeze(): void;
  /** Requests received by the kernel that the server has not read: connections to its port with unread bytes. */
  unreadRequests(): number;
}

/** Established TCP connections to `port` on this host with bytes waiting to be read (/proc/net/tcp). */
function unreadConnections(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, , state, queues]) => {
      const rx = queues?.split(':')[1] ?? '0';
      return local?.endsWith(`:${hexPort}`) === true && state === '01' && Number.parseInt(rx, 16) > 0;
    }).length;
}

/**
 * Writes a model with make_model.py and starts llama-cpp-python's server on it, on a free
 * loopback port; resolves once GET /v1/models answers 200 (within 120 s), else throws with
 * the log tail. Requires the install (llamaServerMissing() undefined).
 */
export async function startLlamaServer(opts: LlamaServerOptions = {}): Promise<LlamaServer> {
  const python = llamaPython();
  const dir = mkdtempSync(join(tmpdir(), 'aiops-llama-'));
  const modelPath = join(dir, 'model.gguf');
  await promisify(execFile)(python, [MAKE_MODEL, modelPath, String(opts.seed ?? 26)]);
  const [port = 0] = await freePorts(1);
  const model = opts.model ?? 'aiops-test-random';
  const proc: Component = spawnComponent(
    {
      name: 'llama-server',
      binary: python,
      args: [
        '-m',
        'llama_cpp.server',
        '--model',
        modelPath,
        '--model_alias',
        model,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--n_ctx',
        String(opts.nCtx ?? 2048),
        '--n_threads',
        '1',
      ],
      env: { HF_HUB_OFFLINE: '1', NO_PROXY: '127.0.0.1' },
    },
    dir,
    false,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'llama-cpp-python server to answer /v1/models',
      async () => ((await fetch(`${url}/v1/models`)).ok ? true : undefined),
      { deadline: Date.now() + 120_000, watch: [proc], intervalMs: 100 },
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  let stopped = false;
  return {
    url,
    endpoint: `${url}/v1/chat/completions`,
    model,
    logPath: proc.logPath,
    async stop() {
      await proc.stop();
      if (!stopped) await rm(dir, { recursive: true, force: true });
      stopped = true;
    },
    async kill() {
      await proc.stop(0);
    },
    freeze() {
      process.kill(proc.pid, 'SIGSTOP');
    },
    unreadRequests: () => unreadConnections(port),
  };
}

/** The llama-cpp-python settings docs/llm.md shows, as the tests run them. */
export interface DocumentedSettings {
  /** The server's `--model_alias`, which the operator's `--llm-default-model` names. */
  readonly model: string;
  /** The server's `--n_ctx`. */
  readonly nCtx: number;
  /** The operator's `--llm-*` flags with the documented port replaced by `port`. */
  operatorFlags(port: number): string[];
  /** The AITask's `spec.decision` with the documented port replaced by `port`. */
  decision(port: number): { mode: 'LLM'; llm: { endpoint: string; timeoutSeconds?: number } };
}

/** The page and heading the settings are read from. */
export const LLM_DOC = 'docs/llm.md';

/**
 * Reads docs/llm.md's "Settings per server" section: the sh block starting llama_cpp.server
 * (its `--model_alias`, `--n_ctx`, `--port`) and `npm run operator` (its `--llm-*` flags),
 * and the yaml block with `mode: LLM` (endpoint, timeoutSeconds). Throws when the page no
 * longer has them, so the documented settings and the tested ones cannot drift apart.
 */
export function documentedSettings(): DocumentedSettings {
  const text = readFileSync(fileURLToPath(new URL(`../../${LLM_DOC}`, import.meta.url)), 'utf8');
  const section = text.slice(text.indexOf('\n## Settings per server'));
  const sh = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const arg = (name: string): string => {
    const m = new RegExp(`--${name}[ =](\\S+)`).exec(sh);
    if (m?.[1] === undefined) throw new Error(`${LLM_DOC}: no ${name} in the llama-cpp-python block`);
    return m[1];
  };
  const port = arg('port');
  const endpoint = /endpoint: (\S+)/.exec(yaml)?.[1];
  const timeout = /timeoutSeconds: (\d+)/.exec(yaml)?.[1];
  if (!sh.includes('python -m llama_cpp.server') || endpoint === undefined || !yaml.includes('mode: LLM'))
    throw new Error(`${LLM_DOC}: the llama-cpp-python settings are gone from "Settings per server"`);
  const operatorLine = sh.split('\n').find((l) => l.startsWith('npm run operator')) ?? '';
  const flags = operatorLine.split(/\s+/).filter((w) => w.startsWith('--llm-'));
  const withPort = (s: string, p: number): string => s.replaceAll(`:${port}/`, `:${p}/`);
  return {
    model: arg('model_alias'),
    nCtx: Number(arg('n_ctx')),
    operatorFlags: (p) => flags.map((f) => withPort(f, p)),
    decision: (p) => ({
      mode: 'LLM',
      llm: {
        endpoint: withPort(endpoint, p),
        ...(timeout !== undefined ? { timeoutSeconds: Number(timeout) } : {}),
      },
    }),
  };
}

/** HTTP statuses of the chat-completions requests the server logged (uvicorn's access log), in order. */
export function completionStatuses(logText: string): number[] {
  return [...logText.matchAll(/"POST \/v1\/chat\/completions HTTP\/1\.1" (\d{3})/g)].map((m) => Number(m[1]));
}
