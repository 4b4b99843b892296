// The plugin's exit-code contract and its one error boundary: every failure reaches the
// user as one line that names the object and the fix, with the documented exit code;
// only unexpected internal errors offer a stack trace, and only on request.

import {
  ApiError,
  ForbiddenError,
  NotFoundError,
  ServerError,
  UnauthorizedError,
} from '../lib/kube/errors.ts';
import { OverrideError } from '../lib/kube/overrides.ts';

/** Exit codes of `kubectl aiops` (README "Exit codes"). */
export const ExitCode = {
  /** Success; `generation-diff`: generation and observedGeneration agree. */
  Ok: 0,
  /** An error, or (`generation-diff`) the compared specs differ. */
  Error: 1,
  /** Bad usage: unknown flag, missing argument, invalid flag value. */
  Usage: 2,
  /** Refused: `force-finalize` on an object not being deleted, or with an operator alive or of unknown liveness (without --force); `migrate-storage` while conversion fails; `approve` with no decision waiting, another than `--id` waiting, or the AITask's target or generation, the target's UID or replicas changed since the decision was made; `simulate` when the operator would refuse the task's target, spec or query. */
  Refused: 3,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure whose message is already fit for the user. */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  constructor(message: string, exitCode: ExitCodeValue = ExitCode.Error) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Bad flags or arguments (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage);
  }
}

/** A refusal to act (exit 3). */
export class RefusedError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Refused);
  }
}

/** Resolves to undefined instead of rejecting when the object does not exist. */
export async function ifFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Where the failing request went, for messages that name the server. */
export interface ErrorContext {
  server?: string;
  context?: string;
}

/**
 * Turns any thrown value into one line and an exit code. API errors that no command
 * translated (they carry no object name) are named by their class and the server.
 */
export function describeError(
  err: unknown,
  ctx: ErrorContext = {},
): { message: string; exitCode: ExitCodeValue; internal: boolean } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode, internal: false };
  const where = ctx.server !== undefined ? ` at ${ctx.server}` : '';
  if (err instanceof ServerError && err.code === 0)
    return {
      message: `${err.message.replace(/^cannot reach the apiserver/, `cannot reach the apiserver${where}`)} (check --kubeconfig/--context, or that the cluster is running)`,
      exitCode: ExitCode.Error,
      internal: false,
    };
  if (err instanceof UnauthorizedError)
    return {
      message: `the apiserver${where} rejected the credentials (401 Unauthorized): check the user of the kubeconfig context`,
      exitCode: ExitCode.Error,
      internal: false,
    };
  if (err instanceof ForbiddenError)
    return { message: `forbidden: ${err.message}`, exitCode: ExitCode.Error, internal: false };
  if (err instanceof NotFoundError)
    return { message: `not found: ${err.message}`, exitCode: ExitCode.Error, internal: false };
  if (err instanceof ApiError)
    return {
      message: `the apiserver${where} answered ${err.code} ${err.reason}: ${err.message}`.replace(
        / {2,}/g,
        ' ',
      ),
      exitCode: ExitCode.Error,
      internal: false,
    };
  if (err instanceof OverrideError)
    return { message: err.message, exitCode: ExitCode.Error, internal: false };
  if (err instanceof Error && err.name === 'KubeConfigError')
    return {
      message: `${err.message} (pass --kubeconfig or set KUBECONFIG)`,
      exitCode: ExitCode.Error,
      internal: false,
    };
  const message = err instanceof Error ? err.message : String(err);
  return {
    message: `internal error: ${message} (set AIOPS_DEBUG=1 for the stack trace)`,
    exitCode: ExitCode.Error,
    internal: true,
  };
}
