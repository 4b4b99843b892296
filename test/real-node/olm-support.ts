// What the real-OLM suites ask of OLM's objects, shared by the install and the upgrade
// tests: a CSV's phase, waiting for a CSV to be Succeeded and stay so (OLM flips a fresh CSV
// to Pending/NeedsReinstall once or twice first), with OLM's state in the error when it never
// gets there, the AITask CRD's versions as OLM left them, and the conditions the operator
// reported in its OperatorCondition as OLM copied them to status.
import { eventually } from '../harness/wait.ts';
import { type Kubectl } from '../harness/kubectl.ts';

/** The OLM views of one install namespace, read through `kubectl`. */
export function olmViews(kubectl: Kubectl, namespace: string) {
  const csvPhase = (csv: string): string | undefined => {
    try {
      return kubectl(['get', 'csv', csv, '-n', namespace, '-o', 'jsonpath={.status.phase}']) || undefined;
    } catch {
      return undefined;
    }
  };
  /**
   * Subscription conditions, InstallPlans, CSVs, ReplicaSets, Pods, Nodes, the operator's last
   * log lines and the namespace's last events, for an error message.
   */
  const state = (): string => {
    const read = (args: string[]): string => {
      try {
        return kubectl(args);
      } catch (e) {
        return (e as Error).message;
      }
    };
    return (
      `subscription: ${read(['get', 'subscription', '-n', namespace, '-o', 'jsonpath={.items[*].status.conditions}'])}` +
      `\ninstallplans: ${read(['get', 'installplan', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.spec.clusterServiceVersionNames} {.status.phase} {.status.conditions}{"\\n"}{end}'])}` +
      `\ncsv: ${read(['get', 'csv', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason} {.status.message}{"\\n"}{end}'])}` +
      `\nunmet requirements: ${read(['get', 'csv', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name}: {range .status.requirementStatus[?(@.status!="Present")]}{.kind}/{.name} {.status} {.message}; {end}{"\\n"}{end}'])}` +
      `\nreplicasets: ${read(['get', 'replicasets', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name} spec={.spec.replicas} status={.status.replicas} ready={.status.readyReplicas}{"\\n"}{end}'])}` +
      `\npods: ${read(['get', 'pods', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} deleting={.metadata.deletionTimestamp} node={.spec.nodeName} ready={.status.conditions[?(@.type=="Ready")].status} restarts={.status.containerStatuses[*].restartCount} {.status.containerStatuses[*].state} last={.status.containerStatuses[*].lastState}{"\\n"}{end}'])}` +
      `\nnodes: ${read(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {range .status.conditions[*]}{.type}={.status} {end} taints={.spec.taints}{"\\n"}{end}'])}` +
      `\noperator logs:\n${read(['logs', '-n', namespace, '-l', 'app.kubernetes.io/name=aiops-operator', '--prefix', '--tail=8', '--max-log-requests=6'])}` +
      `\nlast events:\n${read(['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp', '-o', 'jsonpath={range .items[*]}{.lastTimestamp} {.involvedObject.kind}/{.involvedObject.name} {.reason}: {.message}{"\\n"}{end}']).split('\n').slice(-40).join('\n')}`
    );
  };
  return {
    csvPhase,
    /** Waits until `csv` has been Succeeded for 10 s in a row (deadline `ms`, default 420 000). */
    stableSucceeded: async (csv: string, ms = 420_000): Promise<void> => {
      let since: number | undefined;
      await eventually(
        `${csv} Succeeded and stable for 10 s`,
        () => {
          if (csvPhase(csv) !== 'Succeeded') return (since = undefined);
          since ??= Date.now();
          return Date.now() - since >= 10_000 ? true : undefined;
        },
        ms,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${state()}`, { cause: err });
      });
    },
    /**
     * Waits until the status of the OperatorCondition named `csv` (where OLM copies the
     * operator's spec.conditions) shows exactly `want`, each `Type=Status:Reason`; the error
     * says what it showed instead.
     */
    operatorConditions: async (csv: string, want: readonly string[]): Promise<void> => {
      const expected = [...want].sort();
      let seen: string[] = [];
      const read = (): string[] => {
        const status = JSON.parse(
          kubectl([
            'get',
            'operatorconditions.v2.operators.coreos.com',
            csv,
            '-n',
            namespace,
            '-o',
            'jsonpath={.status}',
          ]) || '{}',
        ) as { conditions?: { type: string; status: string; reason: string }[] };
        return (status.conditions ?? []).map((c) => `${c.type}=${c.status}:${c.reason}`).sort();
      };
      await eventually(
        `${csv}'s OperatorCondition to show ${expected.join(', ')}`,
        () => ((seen = read()).join() === expected.join() ? true : undefined),
        60_000,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; it shows: ${seen.join(', ') || 'nothing'}`, {
          cause: err,
        });
      });
    },
    /** The AITask CRD's versions as `[name, storage, deprecated]`. */
    crdVersions: (): [string, boolean, boolean][] =>
      (
        JSON.parse(
          kubectl(['get', 'crd', 'aitasks.aiops.example.com', '-o', 'jsonpath={.spec.versions}']),
        ) as {
          name: string;
          storage: boolean;
          deprecated?: boolean;
        }[]
      ).map((v) => [v.name, v.storage, v.deprecated ?? false]),
  };
}
