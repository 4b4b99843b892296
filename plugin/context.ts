// What the program hands a command body: its output channels (Io), the validated global
// flags with styling and a lazily opened session (CommandContext), and the body's signature.
// Its own module so that program.ts (which builds the context) and commands/*.ts (which use
// it) both depend on it instead of on each other.

import type { GlobalOptions, Output, OutputFormat } from './flags.ts';
import type { Palette } from './format.ts';
import type { Session } from './session.ts';

/** Where a command writes and what it knows about its terminal. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Whether stdout is a terminal (colour in `--color auto`). */
  readonly isTTY: boolean;
  /** Whether stderr is a terminal (progress lines); default false. */
  readonly errIsTTY?: boolean;
  /** Columns of the terminal stdout is (charts as wide as it); default none known. */
  readonly columns?: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  now(): Date;
}

/** Everything a command body gets: validated globals, styling, and a lazily opened session. */
export interface CommandContext {
  readonly io: Io;
  /** `-o` (`jsonpath` for both JSONPath forms). */
  readonly format: OutputFormat;
  /** `-o` as parsed, with the JSONPath template. */
  readonly output: Output;
  /** Whether `-o` asks for a document (json, yaml, jsonpath): print it with printDoc. */
  readonly machine: boolean;
  /** Writes `doc` as `-o` asks (JSON, YAML or the JSONPath template's output). */
  printDoc(doc: unknown): void;
  readonly namespace: string | undefined;
  readonly pal: Palette;
  readonly globals: GlobalOptions;
  /** Connects on first use (loads the kubeconfig); the same session afterwards. */
  session(): Promise<Session>;
}

/** A command body: positional arguments and the command's own options in, exit code out. */
export type CommandBody = (
  ctx: CommandContext,
  args: string[],
  opts: Record<string, unknown>,
) => Promise<number>;
