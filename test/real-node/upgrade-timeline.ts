// What an OLM upgrade does to the conversion path, in the order it happens: the CRD's
// caBundle, the CA in OLM's service-cert Secret, the operator pods (phase, readiness, the CA
// hash OLM stamps on them, deletion) and what each pod logs about its certificate, each
// line stamped with the seconds since the recording started, beside what the test marks
// (a failed read). The upgrade test prints it when reads failed, so a count above the bound
// comes with the windows that made it.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';

/** A recording under way. */
export interface Timeline {
  /** Adds `what` at the current time. */
  mark(what: string): void;
  /** Stops every watch and returns the lines, oldest first. */
  stop(): string[];
}

/** The log messages of the operator that concern its serving certificate or the CRD's caBundle. */
const CERT_LOG = /certificate|caBundle|Secret/;

/** A short name for a base64 CA: 'none' when empty, else the first 8 hex digits of its SHA-256. */
const caName = (b64: string): string =>
  b64 === '' ? 'none' : createHash('sha256').update(b64).digest('hex').slice(0, 8);

/**
 * Starts recording, with `kubectl --kubeconfig=<kubeconfig>`: CRD `crd`, Secret `secret` and
 * the pods labelled `selector` in `namespace`, and the certificate lines of each pod's log.
 */
export function recordTimeline(opts: {
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly crd: string;
  readonly secret: string;
  readonly selector: string;
}): Timeline {
  const t0 = Date.now();
  const lines: string[] = [];
  const children: ChildProcess[] = [];
  const add = (what: string): void => {
    lines.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s  ${what}`);
  };
  const follow = (args: readonly string[], onLine: (line: string) => void): void => {
    const child = spawn('kubectl', [`--kubeconfig=${opts.kubeconfig}`, ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line !== '') onLine(line);
      }
    });
  };
  const ns = ['-n', opts.namespace];
  follow(
    ['get', 'crd', opts.crd, '-w', '-o', 'jsonpath={.spec.conversion.webhook.clientConfig.caBundle}{"|\\n"}'],
    (l) => add(`CRD caBundle ${caName(l.replace(/\|$/, ''))}`),
  );
  follow(['get', 'secret', opts.secret, ...ns, '-w', '-o', 'jsonpath={.data.olmCAKey}{"|\\n"}'], (l) =>
    add(`Secret CA ${caName(l.replace(/\|$/, ''))}`),
  );
  const logging = new Set<string>();
  follow(
    [
      'get',
      'pods',
      ...ns,
      '-l',
      opts.selector,
      '-w',
      '-o',
      'jsonpath={.metadata.name} {.status.phase} ready={.status.containerStatuses[0].ready} olmcahash={.metadata.annotations.olmcahash} deleting={.metadata.deletionTimestamp}{"\\n"}',
    ],
    (l) => {
      add(`pod ${l}`);
      const [pod = '', phase = ''] = l.split(' ');
      if (phase !== 'Running' || logging.has(pod)) return;
      logging.add(pod);
      follow(['logs', '-f', pod, ...ns], (log) => {
        if (CERT_LOG.test(log)) add(`${pod} log: ${log.slice(0, 240)}`);
      });
    },
  );
  return {
    mark: add,
    stop() {
      for (const c of children) c.kill('SIGTERM');
      return [...lines];
    },
  };
}
