// Bench section `deployed`: the operator as users run it, on the harness's real node. Applies
// deploy/aiops-operator.yaml (one replica, the README's toleration patch) and measures the
// time from the Deployment's creation to its Pod being Ready, and the RSS of the operator's
// process as deployed (the bundled image), next to the same figures for a pod of the same
// base image running only an idle Node HTTP server (the floor measured in the same run).
import { eventually } from '../harness/wait.ts';
import { kubectlWith, type Kubectl } from '../harness/kubectl.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOperatorImage } from '../../scripts/image.ts';
import { startCluster } from '../harness/cluster.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { NODE_NET, REAL_NODE_NAME, REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { realNodeMissing } from '../harness/real-node/node.ts';
import { podProcesses } from '../real-node/support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const MiB = 1024 * 1024;

interface PodView {
  metadata: { uid: string };
  spec: { nodeName?: string };
  status: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
}

/** RSS in bytes of the pod's process whose command line starts with `node`. */
function nodeRss(uid: string): number {
  const proc = podProcesses(uid).find((p) => p.cmdline.startsWith('node'));
  if (proc === undefined) throw new Error(`no node process in pod ${uid}`);
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** Creates → Ready time (ms, from the Pod's own timestamps) and the Pod of `selector` in `ns`. */
async function readyPod(kubectl: Kubectl, ns: string, selector: string, t0: number) {
  const pod = await eventually(
    `a Ready pod ${selector}`,
    () => {
      const items = (
        JSON.parse(kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json'])) as { items: PodView[] }
      ).items;
      return items.find(
        (p) =>
          p.spec.nodeName === REAL_NODE_NAME &&
          (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      );
    },
    120_000,
  );
  return { pod, ms: Date.now() - t0 };
}

/** The `deployed` section; skipped with a line when no real node can run here. */
export async function bench(): Promise<void> {
  const why = realNodeMissing(defaultBinDir());
  if (why !== undefined) {
    process.stdout.write(`\n## deployed (real node)\nskipped: ${why}\n`);
    return;
  }
  const image = buildOperatorImage({ log: () => undefined });
  const cluster = await startCluster({ realNode: true, nodes: 0, images: [image] });
  try {
    const kubectl = kubectlWith(cluster.kubeconfigPath);
    const idle = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'idle-node', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'idle-node' } },
        template: {
          metadata: { labels: { app: 'idle-node' } },
          spec: {
            tolerations: [REAL_NODE_TOLERATION],
            containers: [
              {
                name: 'idle',
                image,
                imagePullPolicy: 'Never',
                command: ['node', '-e', "require('node:http').createServer(() => {}).listen(8080)"],
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    };
    let t0 = Date.now();
    kubectl(['apply', '-f', '-'], JSON.stringify(idle));
    const floor = await readyPod(kubectl, 'default', 'app=idle-node', t0);
    await new Promise((r) => setTimeout(r, 5000));
    const floorRss = nodeRss(floor.pod.metadata.uid);

    t0 = Date.now();
    kubectl(['apply', '-f', join(root, 'deploy/aiops-operator.yaml')]);
    // prettier-ignore
    kubectl(['-n', 'aiops-system', 'patch', 'deployment', 'aiops-operator', '--type=json', '-p', JSON.stringify([
      { op: 'replace', path: '/spec/replicas', value: 1 },
      { op: 'add', path: '/spec/template/spec/tolerations', value: [REAL_NODE_TOLERATION] },
      { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--prometheus-url=http://${NODE_NET.hostIP}:9` },
    ])]);
    const op = await readyPod(kubectl, 'aiops-system', 'app.kubernetes.io/name=aiops-operator', t0);
    await new Promise((r) => setTimeout(r, 5000));
    const opRss = nodeRss(op.pod.metadata.uid);
    const line = (what: string, v: string, base: string, ratio: number): string =>
      `| ${what} | ${v} | ${base} | ${ratio.toFixed(2)}× |\n`;
    process.stdout.write(
      '\n## deployed (real node, the image as built by npm run image)\n' +
        '| what | figure | baseline in the same run | ratio |\n|---|---|---|---|\n' +
        line(
          'operator Pod: Deployment applied → Pod Ready (readiness probe every 10 s)',
          `${op.ms} ms`,
          `idle Node pod (probe every 1 s): ${floor.ms} ms`,
          op.ms / floor.ms,
        ) +
        line(
          'operator RSS, idle, as deployed',
          `${(opRss / MiB).toFixed(1)} MiB`,
          `idle Node HTTP server, same image: ${(floorRss / MiB).toFixed(1)} MiB`,
          opRss / floorRss,
        ),
    );
  } finally {
    await cluster.stop();
  }
}
