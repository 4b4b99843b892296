// A program's command line as one table: each flag written once with its parser, default,
// environment variable and help, from which come the commander options (--help, parsing,
// usage errors), the typed values object the program reads, and the rows of the docs' flag
// table. The table key is the name of the value and must be commander's attribute name of
// the flag (`--max-body-bytes` → `maxBodyBytes`); `optionsTable` refuses a table where they
// differ, so a value cannot be read under a name its flag does not set. Pure apart from
// building commander objects; the integer and switch parsers every program shares live here.

import { InvalidArgumentError, Option, type Command } from 'commander';

/** What the docs' flag table says of a flag: its default and meaning, as Markdown. */
export interface FlagDocs {
  readonly default: string;
  readonly meaning: string;
}

/** One flag. `T` is the type of its value, `undefined` included when it has no default. */
export interface Flag<T> {
  /** Commander's flag spelling: `--name <arg>`, `--alias, --name <arg>`, `--name [bool]`. */
  readonly flags: string;
  /** The --help text. */
  readonly help: string;
  /** Turns the given text into the value; throws InvalidArgumentError (a usage error, exit 2). */
  readonly parse: (value: string) => T;
  /** The value when the flag is not given (absent: undefined). */
  readonly default?: T;
  /** The value of a bare `--name` of an optional-argument flag, as given text. */
  readonly preset?: string;
  /** The only values accepted (commander's "Allowed choices are …"). */
  readonly choices?: readonly string[];
  /** Attribute name of a flag this one may not be given with. */
  readonly conflicts?: string;
  /** False: no environment variable sets this flag (whatever the table's rule would name). */
  readonly env?: false;
  /** A variable read elsewhere (the client's KUBECONFIG) that the docs name in its place. */
  readonly docsEnv?: string;
  readonly docs?: FlagDocs;
}

/** Any flag, whatever its value type (a Flag is covariant in it). */
export type AnyFlag = Flag<unknown>;

/** The values a table of flags gives, each under its key. */
export type Values<F extends Readonly<Record<string, AnyFlag>>> = {
  readonly [K in keyof F]: F[K] extends Flag<infer T> ? T : never;
};

/** A flag with a default: its value is always set. */
export function flag<T>(spec: Flag<T> & { readonly default: T }): Flag<T>;
/** A flag without a default: its value is undefined unless given. */
export function flag<T>(spec: Flag<T>): Flag<T | undefined>;
export function flag<T>(spec: Flag<T>): Flag<T> {
  return spec;
}

/** The parser of a text flag: the text as given. */
export function text(value: string): string {
  return value;
}

/**
 * An integer from `min` to `max` (inclusive); anything else is refused with `refusal(value)`,
 * by default `expected an integer from <min> to <max>, got "<value>"`.
 */
export function integer(
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  refusal = (value: string): string => `expected an integer from ${min} to ${max}, got "${value}"`,
): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(refusal(value));
    return n;
  };
}

/** `true`/`false` (also 1/0, yes/no, on/off, and empty for false), as a switch's value. */
export function bool(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${value}"`);
}

/**
 * A switch, off by default (on when `on`): `--name` or `--name=true` turns it on,
 * `--name=false` off, and so does its environment variable's value (commander would turn a
 * plain boolean on for any value).
 */
export function toggle(
  name: string,
  help: string,
  on = false,
  docs?: FlagDocs,
): Flag<boolean> & { readonly default: boolean } {
  return {
    flags: `${name} [bool]`,
    help,
    parse: bool,
    default: on,
    preset: 'true',
    ...(docs ? { docs } : {}),
  };
}

/** One row of the docs' flag table. */
export interface FlagRow {
  /** Every long name, first as spelled. */
  readonly names: readonly string[];
  /** The variable that sets it, if any. */
  readonly env: string | undefined;
  readonly docs: FlagDocs | undefined;
}

/** A program's flags with the rule naming their environment variables. */
export interface OptionsTable<F extends Readonly<Record<string, AnyFlag>>> {
  readonly flags: F;
  /** Fresh commander options, in table order. */
  options(): Option[];
  /** Adds the options to `command` and returns it. */
  addTo(command: Command): Command;
  /** The values `command` parsed (after `parse`/`parseAsync`), each under its key. */
  values(command: Command): Values<F>;
  /** The docs' rows, in table order. */
  rows(): FlagRow[];
}

function optionOf(f: AnyFlag, env: string | undefined): Option {
  const option = new Option(f.flags, f.help);
  // Choices first: they are shown in --help, and the flag's own parser (which refuses the rest) replaces commander's.
  if (f.choices !== undefined) option.choices(f.choices);
  option.argParser(f.parse);
  if (f.default !== undefined) option.default(f.default);
  if (f.preset !== undefined) option.preset(f.preset);
  if (f.conflicts !== undefined) option.conflicts(f.conflicts);
  if (env !== undefined) option.env(env);
  return option;
}

/**
 * The table of `flags`; `envOf` names the environment variable of a long flag (default:
 * none). Throws when a key is not the attribute name commander gives its flag.
 */
export function optionsTable<F extends Readonly<Record<string, AnyFlag>>>(
  flags: F,
  envOf: (long: string) => string | undefined = () => undefined,
): OptionsTable<F> {
  const entries = Object.entries(flags);
  const envFor = (f: AnyFlag): string | undefined => {
    const long = new Option(f.flags).long;
    return f.env === false || long === undefined ? undefined : envOf(long);
  };
  for (const [key, f] of entries) {
    const attribute = new Option(f.flags).attributeName();
    if (attribute !== key) throw new Error(`flag ${f.flags} sets "${attribute}", not its table key "${key}"`);
  }
  const options = (): Option[] => entries.map(([, f]) => optionOf(f, envFor(f)));
  return {
    flags,
    options,
    addTo(command) {
      for (const option of options()) command.addOption(option);
      return command;
    },
    values(command) {
      const parsed = command.opts();
      // Each value is what the key's own parser or default produced (keys are checked above).
      return Object.fromEntries(entries.map(([key]) => [key, parsed[key]])) as Values<F>;
    },
    rows: () =>
      entries.map(([, f]) => ({
        names: [...f.flags.matchAll(/--[a-z0-9-]+/g)].map((m) => m[0]),
        env: f.docsEnv ?? envFor(f),
        docs: f.docs,
      })),
  };
}

/** The docs' flag table as Markdown (unaligned; prettier aligns it). Throws on a row without docs. */
export function flagsMarkdown(rows: readonly FlagRow[]): string {
  const lines = rows.map((r) => {
    if (r.docs === undefined) throw new Error(`${r.names.join(', ')} has no docs row`);
    const names = r.names.map((n) => `\`${n}\``).join(', ');
    return `| ${names} | ${r.env === undefined ? '' : `\`${r.env}\``} | ${r.docs.default} | ${r.docs.meaning} |`;
  });
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...lines, ''].join('\n');
}

/** Replaces the text between `begin` and `end` in `doc` with `table` (a blank line either side, as prettier keeps it); throws when a marker is missing. */
export function withTable(doc: string, table: string, begin: string, end: string): string {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the document lacks the markers ${begin} … ${end}`);
  return `${doc.slice(0, from + begin.length)}\n\n${table.trim()}\n\n${doc.slice(to)}`;
}
