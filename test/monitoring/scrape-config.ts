// The Prometheus scrape configuration prometheus-operator generates from the shipped
// ServiceMonitor, for a test without prometheus-operator or a pod network: one job per
// endpoint, with its scheme, path, bearer token file and TLS settings as the ServiceMonitor
// says, and the target labels prometheus-operator sets (job = the Service's name, namespace,
// service, endpoint = the port's name, pod). Only what a pod would differ in is substituted:
// the target (the operator process on 127.0.0.1, by port name), the token file (a token of
// a ServiceAccount bound to aiops-metrics-reader) and the interval (1 s, so the test is quick).

import { toYaml } from '../../lib/yaml.ts';

interface Endpoint {
  readonly port: string;
  readonly scheme?: string;
  readonly path?: string;
  readonly bearerTokenFile?: string;
  readonly tlsConfig?: { readonly insecureSkipVerify?: boolean };
}

/** Where the test's stand-ins are. */
export interface ScrapeSubstitutes {
  /** The Service's name (the ServiceMonitor selects it; prometheus-operator's job label). */
  readonly service: string;
  readonly namespace: string;
  readonly pod: string;
  /** host:port of each Service port, by name. */
  readonly targets: Readonly<Record<string, string>>;
  /** File holding the scraper's token, for an endpoint with bearerTokenFile. */
  readonly tokenFile: string;
}

/**
 * prometheus.yml text scraping what `serviceMonitor` selects, evaluating `ruleFiles`
 * (absolute paths), every second. Throws on an endpoint field it does not translate, so a
 * ServiceMonitor setting this test would silently ignore fails it instead.
 */
export function scrapeConfig(
  serviceMonitor: Record<string, unknown>,
  s: ScrapeSubstitutes,
  ruleFiles: readonly string[],
): string {
  const spec = serviceMonitor['spec'] as { endpoints: Endpoint[] };
  const known = new Set(['port', 'scheme', 'path', 'bearerTokenFile', 'tlsConfig', 'interval']);
  const jobs = spec.endpoints.map((e) => {
    for (const k of Object.keys(e))
      if (!known.has(k)) throw new Error(`endpoint field ${k} is not translated`);
    const target = s.targets[e.port];
    if (target === undefined) throw new Error(`no target for port ${e.port}`);
    return {
      job_name: `serviceMonitor/${s.namespace}/${(serviceMonitor['metadata'] as { name: string }).name}/${e.port}`,
      scrape_interval: '1s',
      scheme: e.scheme ?? 'http',
      metrics_path: e.path ?? '/metrics',
      ...(e.bearerTokenFile !== undefined
        ? { authorization: { type: 'Bearer', credentials_file: s.tokenFile } }
        : {}),
      ...(e.tlsConfig !== undefined
        ? { tls_config: { insecure_skip_verify: e.tlsConfig.insecureSkipVerify === true } }
        : {}),
      static_configs: [
        {
          targets: [target],
          labels: { namespace: s.namespace, service: s.service, endpoint: e.port, pod: s.pod },
        },
      ],
      relabel_configs: [{ target_label: 'job', replacement: s.service }],
    };
  });
  return toYaml({
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: [...ruleFiles],
    scrape_configs: jobs,
  });
}
