// The `kubectl aiops` command line: commander definitions (flags, help, examples), the
// one error boundary, and the one output boundary: everything written to stdout or stderr
// passes terminalSafe, so no control character a tenant wrote reaches the terminal raw.
// Command bodies are imported only when a command runs, so `--help`, usage errors and
// completion of command names never load the Kubernetes client.

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { describeError, ExitCode, type ErrorContext } from './errors.ts';
import {
  COLOR_MODES,
  connectionOverrides,
  parseOutput,
  parseRequestTimeout,
  useColor,
  type GlobalOptions,
} from './flags.ts';
import { isDocumentFormat, palette, renderDocument, terminalSafe, visible } from './format.ts';
import { EXAMPLES, EXIT_CODES_HELP } from './help.ts';
import type { CommandBody, CommandContext, Io } from './context.ts';
import type { Session } from './session.ts';

/** Hidden first word kubectl_complete-aiops passes: the rest of the words are completed verbatim. */
export const COMPLETE_COMMAND = '__complete';

/** Builds the program; `state.exitCode` receives the exit code of the command that ran. */
export function buildProgram(io: Io, state: { exitCode: number; errorContext: ErrorContext }): Command {
  const program = new Command('kubectl aiops');
  program
    .description(
      'Debug AITasks of the aiops operator: why a task is in its phase, what changed, and how to unstick it.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(terminalSafe(s, false)),
      writeErr: (s) => io.err(terminalSafe(s, false)),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showHelpAfterError('(run with --help for usage)')
    .helpCommand(false)
    .option('-n, --namespace <namespace>', "namespace of the AITask (default: the context's namespace)")
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: current-context)')
    .option(
      '-o, --output <format>',
      'output format: table, wide, json, yaml, name (describe, explain-phase), jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE',
      'table',
    )
    .option('--request-timeout <duration>', 'timeout of each API request, e.g. 10s, 1m; 0 means none', '30s')
    .addOption(
      new Option('--color <when>', 'colour output: auto (on a terminal), always, never; NO_COLOR wins')
        .choices(COLOR_MODES)
        .default('auto'),
    )
    .option('-s, --server <url>', "apiserver URL, instead of the kubeconfig cluster's")
    .option('--cluster <name>', "kubeconfig cluster to use (default: the context's)")
    .option('--user <name>', "kubeconfig user to use (default: the context's)")
    .option('--token <token>', "bearer token for the apiserver, instead of the user's credentials")
    .option('--certificate-authority <file>', 'CA certificate file to verify the apiserver with')
    .option('--insecure-skip-tls-verify', "do not verify the apiserver's certificate (insecure)")
    .option('--tls-server-name <name>', "name to verify the apiserver's certificate against")
    .option('--client-certificate <file>', 'client certificate file for TLS')
    .option('--client-key <file>', 'client key file for TLS')
    .option('--as <user>', 'user to impersonate for every request (a name or system:serviceaccount:NS:NAME)')
    .option('--as-group <group>', 'group to impersonate; repeat for more', collect, [])
    .option('--as-uid <uid>', 'UID to impersonate')
    .addHelpText('after', `\n${EXIT_CODES_HELP}`);

  const runner = (load: () => Promise<CommandBody>) =>
    async function (this: Command, ...raw: unknown[]): Promise<void> {
      const globals = this.optsWithGlobals<GlobalOptions & Record<string, unknown>>();
      const args = raw
        .slice(0, -2)
        .flatMap((a) =>
          typeof a === 'string' ? [a] : Array.isArray(a) ? a.filter((x) => typeof x === 'string') : [],
        );
      const ctx = makeContext(io, globals, state.errorContext, this.name());
      const body = await load();
      state.exitCode = await body(ctx, args, this.opts());
    };

  program
    .command('describe')
    .description(
      'Show an AITask the way kubectl describe would, with its decisions, target health and Events',
    )
    .argument('[name]', 'AITask name; omit to describe every AITask in the namespace')
    .option('-A, --all-namespaces', 'describe AITasks in every namespace')
    .addHelpText('after', EXAMPLES.describe)
    .action(runner(async () => (await import('./commands/describe.ts')).describe));

  program
    .command('explain-phase')
    .description(
      'Explain in plain language why an AITask is in its phase, what happens next, and what you can do',
    )
    .argument('[name]', 'AITask name; omit for a one-line account of every AITask in the namespace')
    .option('-A, --all-namespaces', 'explain AITasks in every namespace')
    .addHelpText('after', EXAMPLES['explain-phase'])
    .action(runner(async () => (await import('./commands/explain-phase.ts')).explainPhaseCommand));

  program
    .command('approve')
    .description(
      'Approve the decision an AITask with approval: Manual is waiting on; the operator executes it once',
    )
    .argument('<name>', 'AITask name')
    .option('--id <decision>', 'approve only if this is the id of the waiting decision')
    .addHelpText('after', EXAMPLES.approve)
    .action(runner(async () => (await import('./commands/approve.ts')).approve));

  program
    .command('force-finalize')
    .description(
      'Unstick an AITask stuck in Terminating: dry run by default, --yes to clean up and remove our finalizer',
    )
    .argument('<name>', 'AITask name')
    .option('--yes', 'perform the cleanup and remove the finalizer (default: dry run)')
    .option('--skip-cleanup', 'remove the finalizer without uncordoning the nodes it still owes')
    .option('--force', 'act even when the operator is evidently alive, or its liveness cannot be told')
    .option('--all', 'remove every finalizer, not only aiops.example.com/finalizer (needs --yes)')
    .option('--lease-name <name>', "name of the operator's leader Lease", 'aiops-operator-leader')
    .option(
      '--lease-namespace <namespace>',
      "namespace of the operator's leader Lease (default: found by name in every namespace)",
    )
    .addHelpText('after', EXAMPLES['force-finalize'])
    .action(runner(async () => (await import('./commands/force-finalize.ts')).forceFinalize));

  program
    .command('generation-diff')
    .description(
      'Compare metadata.generation with status.observedGeneration and diff the spec between kept generations',
    )
    .argument('<name>', 'AITask name')
    .argument('[from]', 'older generation (default: status.observedGeneration)')
    .argument('[to]', 'newer generation (default: metadata.generation, the live spec)')
    .addHelpText('after', EXAMPLES['generation-diff'])
    .action(runner(async () => (await import('./commands/generation-diff.ts')).generationDiff));

  program
    .command('migrate-storage')
    .description(
      'Rewrite every AITask at the storage version and trim the CRD status.storedVersions (before dropping an old version)',
    )
    .option('--dry-run', 'count what would be rewritten; change nothing')
    .option(
      '--page-size <n>',
      'objects per LIST page (default: 10, a page of the largest AITasks within 16 MiB)',
      pageSize,
    )
    .addHelpText('after', EXAMPLES['migrate-storage'])
    .action(runner(async () => (await import('./commands/migrate-storage.ts')).migrateStorageCommand));

  program
    .command('simulate')
    .description(
      "Replay an AITask over its metric's history with the operator's own rules: what would it have done?",
    )
    .argument('[name]', 'AITask name; or -f FILE for one not applied yet')
    .option('-f, --filename <file>', 'an AITask at any served version, validated as the apiserver would')
    .option(
      '--since <duration>',
      'the window ends now (or at --to) and lasts this long, e.g. 24h, 7d (default 24h)',
    )
    .option('--from <time>', 'start of the window, RFC 3339 (instead of --since)')
    .option('--to <time>', 'end of the window, RFC 3339 (default now)')
    .option('--replicas <n>', "replicas the target starts from (default: the target's now)", replicas)
    .option(
      '--prometheus-service <ns/name:port>',
      "Prometheus Service, reached through the apiserver's service proxy (default: $AIOPS_PROMETHEUS_URL, else the installed operator's)",
    )
    .option(
      '--prometheus-url <url>',
      'Prometheus base URL, reached directly (instead of --prometheus-service; default $AIOPS_PROMETHEUS_URL)',
    )
    .addHelpText('after', EXAMPLES.simulate)
    .action(runner(async () => (await import('./commands/simulate.ts')).simulate));

  program
    .command('version')
    .description('Print the plugin, Node.js and server versions and the AITask API versions served')
    .option('--client', 'print the plugin version only; do not contact the server')
    .addHelpText('after', EXAMPLES.version)
    .action(runner(async () => (await import('./commands/version.ts')).version));

  program
    .command('completion')
    .description('Print the kubectl_complete-aiops script that gives `kubectl aiops` shell completion')
    .addHelpText('after', EXAMPLES.completion)
    .action(runner(async () => (await import('./commands/completion.ts')).completion));

  return program;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function replicas(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 10_000)
    throw new InvalidArgumentError(`expected an integer from 0 to 10000, got "${value}"`);
  return n;
}

function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 5000)
    throw new InvalidArgumentError(`expected an integer from 1 to 5000, got "${value}"`);
  return n;
}

/** `io` with both streams behind terminalSafe (the palette's colours kept when `colour`). */
function guarded(io: Io, colour: boolean): Io {
  return {
    ...io,
    out: (s) => io.out(terminalSafe(s, colour)),
    err: (s) => io.err(terminalSafe(s, false)),
    now: () => io.now(),
  };
}

function makeContext(
  io: Io,
  globals: GlobalOptions,
  errorContext: ErrorContext,
  command: string,
): CommandContext {
  const timeoutMs = parseRequestTimeout(globals.requestTimeout);
  const color = useColor(globals.color, io.isTTY, io.env);
  const output = parseOutput(globals.output, command);
  const overrides = connectionOverrides(globals);
  const out = guarded(io, color);
  let session: Promise<Session> | undefined;
  return {
    io: out,
    format: output.format,
    output,
    machine: isDocumentFormat(output),
    printDoc: (doc) => out.out(renderDocument(output, doc)),
    namespace: globals.namespace,
    pal: palette(color),
    globals,
    session() {
      session ??= import('./session.ts').then(async (m) => {
        const s = await m.openSession(globals, timeoutMs, overrides);
        errorContext.server = s.transport.server;
        return s;
      });
      return session;
    },
  };
}

const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/** Runs `kubectl aiops` with `argv` (the words after `kubectl aiops`); resolves to the exit code. */
export async function run(argv: readonly string[], raw: Io): Promise<number> {
  const state = { exitCode: ExitCode.Ok as number, errorContext: {} as ErrorContext };
  const io = guarded(raw, false);
  const program = buildProgram(raw, state);
  if (argv[0] === COMPLETE_COMMAND) {
    const { complete } = await import('./commands/completion.ts');
    io.out(await complete(program, argv.slice(1)));
    return ExitCode.Ok;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return HELP_CODES.has(err.code) ? ExitCode.Ok : ExitCode.Usage;
    const d = describeError(err, state.errorContext);
    io.err(`error: ${visible(d.message)}\n`);
    if (d.internal && (io.env['AIOPS_DEBUG'] ?? '') !== '' && err instanceof Error)
      io.err(`${err.stack ?? ''}\n`);
    return d.exitCode;
  }
}
