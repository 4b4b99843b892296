// Helpers of the real-node suites: kubectl against the suite's own cluster, the host
// processes of a pod's containers (found through the kubelet's cgroups), and a snapshot of
// the machine state the real node must leave as it found it.
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cgroupHierarchies, mountsUnder, readSysctls } from '../harness/real-node/host-state.ts';
import { DEMO_WEB_IMAGE } from '../harness/real-node/images.ts';
import { CGROUP_ROOT, REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { noOtherRealNode } from '../harness/real-node/node.ts';

/** True for the operator's process as the image's entrypoint starts it: `node [flags] dist/operator/main.mjs [args]`. */
export function isOperatorProcess(cmdline: string): boolean {
  return /^node( --\S+)* dist\/operator\/main\.mjs( |$)/.test(cmdline);
}

/** Host pids in the cgroup of pod `uid` (its sandbox and containers), from the pids hierarchy, with their parents'. */
export function podProcesses(uid: string): { pid: number; ppid: number; cmdline: string }[] {
  const pidsRoot = cgroupHierarchies().find((h) => h.endsWith('/pids'));
  if (pidsRoot === undefined) return [];
  const out: { pid: number; ppid: number; cmdline: string }[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const sub = `${dir}/${e.name}`;
      if (e.name !== `pod${uid}`) {
        walk(sub);
        continue;
      }
      for (const c of readdirSync(sub, { withFileTypes: true }).filter((d) => d.isDirectory()))
        for (const line of readFileSync(`${sub}/${c.name}/cgroup.procs`, 'utf8').split('\n')) {
          if (line === '') continue;
          try {
            const cmdline = readFileSync(`/proc/${line}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
            const stat = readFileSync(`/proc/${line}/stat`, 'utf8');
            // stat(5): the parent's pid is the second field after the parenthesised command.
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            out.push({ pid: Number(line), ppid, cmdline });
          } catch {
            // exited meanwhile
          }
        }
    }
  };
  walk(`${pidsRoot}/${CGROUP_ROOT}`);
  return out;
}

/**
 * machineSnapshot() once no other run's real node is on the machine (waiting for it to go, as
 * starting a node would): the machine as a test found it, to compare with after its teardown.
 */
export async function machineBeforeNode(): Promise<Record<string, unknown>> {
  await noOtherRealNode((line) => process.stderr.write(`[real-node] ${line}\n`));
  return machineSnapshot();
}

/** What must be identical before a real node starts and after it is torn down. */
export function machineSnapshot(): Record<string, unknown> {
  const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });
  return {
    netns: run('ip', ['netns', 'list']).trim(),
    links: run('ip', ['-o', 'link', 'show'])
      .split('\n')
      .map((l) => l.split(':')[1]?.trim())
      .filter(Boolean),
    routes: run('ip', ['route', 'show']).trim(),
    nftTables: run('nft', ['list', 'tables']).trim(),
    iptablesChains: run('iptables-save', [])
      .split('\n')
      .filter((l) => l.startsWith(':')),
    // Where a node could leave mounts: netns handles, cluster dirs, default kubelet/containerd/CNI dirs.
    mounts: ['/run', '/tmp', '/var/lib/kubelet', '/var/lib/containerd', '/var/lib/cni'].flatMap(mountsUnder),
    cgroups: cgroupHierarchies().flatMap((h) =>
      readdirSync(h).filter((d) => d.startsWith(CGROUP_ROOT) || d === 'kubepods'),
    ),
    sysctls: readSysctls(),
    ipForward: readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(),
  };
}

/** The pods of demo-web (busybox httpd) labelled app=`app`, pinned to the real node by label and toleration. */
function webPods(app: string): object {
  return {
    metadata: { labels: { app } },
    spec: {
      nodeSelector: { 'aiops.example.com/real-node': 'true' },
      tolerations: [REAL_NODE_TOLERATION],
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'web',
          image: DEMO_WEB_IMAGE,
          imagePullPolicy: 'Never',
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

/** demo-web: a Deployment `web` of busybox httpd, pinned to the real node by label and toleration. */
export function webDeployment(replicas: number): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: webPods('web') },
  };
}

/**
 * demo-web as StatefulSet `name` (pods `name-0` …, labelled app=`name`, each created once the
 * one before is Ready), pinned like webDeployment's; its governing Service need not exist.
 */
export function webStatefulSet(name: string, replicas: number): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: webPods(name),
    },
  };
}

/**
 * The first ```sh block after the heading that starts with `heading` (e.g. `## With OLM on
 * the local cluster`) in the README or a page of docs/, or with `containing` the first there
 * that contains that text, so tests run the documented commands exactly as users read them.
 * Throws naming the heading when no page has such a block.
 */
export function readmeShBlock(heading: string, containing = ''): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const pages = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8');
    const at = text.indexOf(`\n${heading}`);
    if (at < 0) continue;
    const blocks = [...text.slice(at).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const block = blocks.find((b) => b.includes(containing));
    if (block !== undefined) return block;
  }
  throw new Error(
    `neither the README nor docs/ has an sh block${containing ? ` with "${containing}"` : ''} under "${heading}"`,
  );
}
