// What the real-OLM suites ask of OLM's objects, shared by the install and the upgrade
// tests: a CSV's phase, waiting for a CSV to be Succeeded and stay so (OLM flips a fresh CSV
// to Pending/NeedsReinstall once or twice first), with OLM's state in the error when it never
// gets there, and the AITask CRD's versions as OLM left them.
import { until, type kubectlWith } from './support.ts';

type Kubectl = ReturnType<typeof kubectlWith>;

/** The OLM views of one install namespace, read through `kubectl`. */
export function olmViews(kubectl: Kubectl, namespace: string) {
  const csvPhase = (csv: string): string | undefined => {
    try {
      return kubectl(['get', 'csv', csv, '-n', namespace, '-o', 'jsonpath={.status.phase}']) || undefined;
    } catch {
      return undefined;
    }
  };
  /** Subscription conditions, InstallPlans and CSVs, one line each, for an error message. */
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
      `\ncsv: ${read(['get', 'csv', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason} {.status.message}{"\\n"}{end}'])}`
    );
  };
  return {
    csvPhase,
    /** Waits until `csv` has been Succeeded for 10 s in a row (deadline `ms`, default 420 000). */
    stableSucceeded: async (csv: string, ms = 420_000): Promise<void> => {
      let since: number | undefined;
      await until(
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
