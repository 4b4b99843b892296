// Help texts with examples for every command and the exit-code table, kept apart from the
// command definitions so the program file stays readable. Plain strings, no imports.

const block = (lines: readonly string[]): string => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

/** The "Examples:" section of each command's --help. */
export const EXAMPLES = {
  describe: block([
    '# Everything about one AITask in the current namespace',
    'kubectl aiops describe web-cpu',
    '# Every AITask in every namespace, as YAML for a bug report',
    'kubectl aiops describe -A -o yaml',
    '# Another cluster, with the namespace spelled out',
    'kubectl aiops describe web-cpu -n prod --context staging',
  ]),
  'explain-phase': block([
    '# Why is web-cpu Failed, what happens next, and what can I do?',
    'kubectl aiops explain-phase web-cpu -n prod',
    '# One line per AITask in the cluster, with wide columns',
    'kubectl aiops explain-phase -A -o wide',
    '# The same facts for a script',
    'kubectl aiops explain-phase web-cpu -o json',
  ]),
  approve: block([
    '# Show what web-cpu waits on: action, target (of any kind) and its UID, pod or node, replicas (approves nothing)',
    'kubectl aiops approve web-cpu -n prod',
    '# Approve exactly the decision shown; refused (exit 3) if another waits or any of it changed',
    'kubectl aiops approve web-cpu -n prod --id 3f2c9a64-8d1e-4c52-9b0e-1a2b3c4d5e6f',
  ]),
  'force-finalize': block([
    '# Dry run: finalizers, operator liveness evidence and the cleanup still owed',
    'kubectl aiops force-finalize web-cpu -n prod',
    '# Uncordon the nodes it owes, then remove aiops.example.com/finalizer',
    'kubectl aiops force-finalize web-cpu -n prod --yes',
    '# Operator in a custom namespace',
    'kubectl aiops force-finalize web-cpu --lease-namespace ops --yes',
  ]),
  'generation-diff': block([
    '# What changed since the operator last observed the spec (exit 1 if anything)',
    'kubectl aiops generation-diff web-cpu -n prod',
    '# Between two kept generations, for a script',
    'kubectl aiops generation-diff web-cpu 3 5 -o json',
  ]),
  'migrate-storage': block([
    '# What would move (nothing is written)',
    'kubectl aiops migrate-storage --dry-run',
    '# Move every AITask to the storage version; run again if interrupted',
    'kubectl aiops migrate-storage',
  ]),
  simulate: block([
    '# What would web-load have done over the last 7 days? (the metric is replayed as recorded)',
    'kubectl aiops simulate web-load -n demo --since 7d',
    '# Why did it scale at 03:12? A window of its own, for a script',
    'kubectl aiops simulate web-load -n demo --from 2026-03-02T03:00:00Z --to 2026-03-02T04:00:00Z -o json',
    '# A task not applied yet, with Prometheus reached directly and 3 replicas to start from',
    'kubectl aiops simulate -f web-load.yaml --prometheus-url http://localhost:9090 --replicas 3',
    '# Prometheus from the environment when no flag names it (the variable the operator reads)',
    'export AIOPS_PROMETHEUS_URL=http://localhost:9090; kubectl aiops simulate web-load -n demo',
  ]),
  version: block(['kubectl aiops version', 'kubectl aiops version --client -o json']),
  completion: block([
    '# Install the completion helper next to kubectl-aiops (kubectl >= 1.26 picks it up)',
    'kubectl aiops completion > ~/.local/bin/kubectl_complete-aiops',
    'chmod +x ~/.local/bin/kubectl_complete-aiops',
  ]),
} as const;

/** The exit-code table printed under the top-level --help. */
export const EXIT_CODES_HELP = `Exit codes:
  0  success (generation-diff: generation and observedGeneration agree)
  1  error, with a one-line message naming the object and the fix (generation-diff: the specs differ)
  2  usage error: unknown flag, missing argument, invalid value
  3  refused: force-finalize on an object not being deleted, or while the operator is alive (see --force);
     approve when no decision waits, --id names another, or its target, generation,
     the target's UID or replicas changed since the decision was made;
     migrate-storage while the conversion webhook fails;
     simulate when the operator would refuse the task's target, spec or query

Environment:
  KUBECONFIG   kubeconfig file(s) when --kubeconfig is not given
  NO_COLOR     disable colour even with --color always
`;
