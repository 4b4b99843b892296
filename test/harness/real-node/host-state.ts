// The machine-wide state a kubelet touches outside its own dirs, saved before it starts and
// put back by the teardown: the sysctls it sets (vm.overcommit_memory, kernel.panic,
// kernel.panic_on_oops), its cgroup tree in every v1 hierarchy, its mounts, and the
// processes it and containerd leave behind (containers, shims).
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from '../../../scripts/lib/run.ts';

/** Machine-wide sysctls the kubelet (and kube-proxy) may change; restored by the teardown. */
export const GUARDED_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.netfilter.nf_conntrack_max',
] as const;

const sysctlPath = (key: string): string => `/proc/sys/${key.replaceAll('.', '/')}`;

/** Current values of GUARDED_SYSCTLS that exist on this machine. */
export function readSysctls(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of GUARDED_SYSCTLS) {
    const p = sysctlPath(key);
    if (existsSync(p)) out[key] = readFileSync(p, 'utf8').trim();
  }
  return out;
}

/** Writes back every saved value that differs from the current one. */
export function restoreSysctls(saved: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(saved)) {
    const p = sysctlPath(key);
    if (existsSync(p) && readFileSync(p, 'utf8').trim() !== value) writeFileSync(p, value);
  }
}

const CGROUP_FS = '/sys/fs/cgroup';

/** The v1 hierarchies mounted here (cpu, memory, …, systemd), as directories under /sys/fs/cgroup. */
export function cgroupHierarchies(): string[] {
  return readdirSync(CGROUP_FS)
    .map((h) => join(CGROUP_FS, h))
    .filter((p) => existsSync(join(p, 'cgroup.procs')) && !statSync(p).isSymbolicLink());
}

/** Creates cgroup `name` in every hierarchy (cpuset: with the parent's cpus and mems). */
export function createCgroups(name: string): void {
  for (const h of cgroupHierarchies()) {
    const dir = join(h, name);
    if (!existsSync(dir)) run('mkdir', [dir]);
    if (h.endsWith('/cpuset'))
      for (const f of ['cpuset.cpus', 'cpuset.mems'])
        writeFileSync(join(dir, f), readFileSync(join(h, f), 'utf8').trim());
  }
}

/** Every cgroup dir under `name` in every hierarchy, deepest first. */
function cgroupTree(name: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
    out.push(dir);
  };
  for (const h of cgroupHierarchies()) if (existsSync(join(h, name))) walk(join(h, name));
  return out;
}

/** Pids in cgroup `name` (any hierarchy, any depth). */
export function pidsInCgroups(name: string): number[] {
  const pids = new Set<number>();
  for (const dir of cgroupTree(name))
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n'))
      if (line !== '') pids.add(Number(line));
  return [...pids];
}

/** Pids (other than this process) whose command line contains `text`. */
export function pidsMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** SIGKILLs `pids` and waits (up to 10 s) until none runs. */
export async function killAll(pids: () => number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let left = pids(); left.length > 0; left = pids()) {
    if (Date.now() > deadline) throw new Error(`processes still running after SIGKILL: ${left.join(', ')}`);
    for (const pid of left)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    await sleep(100);
  }
}

/** Removes cgroup `name` and everything under it in every hierarchy (they must be empty of processes). */
export function removeCgroups(name: string): void {
  for (const dir of cgroupTree(name)) rmdirSync(dir);
}

/** Mount points at or under `dir` (from /proc/self/mountinfo), deepest first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => m !== undefined && (m === dir || m.startsWith(`${dir}/`)))
    .map((m) => m.replace(/\\040/g, ' '))
    .sort((a, b) => b.length - a.length);
}

/**
 * Of `mounts`, those a killed run's real node left behind: under the node dir (`node/`) of a
 * harness cluster dir in `tmp` (`aiops-cluster-*`) other than `ownNodeDir`. Only meaningful
 * while the caller holds the machine's one real node, so no other node is using them.
 */
export function leftoverNodeMounts(mounts: readonly string[], tmp: string, ownNodeDir: string): string[] {
  const prefix = `${tmp.replace(/\/$/, '')}/aiops-cluster-`;
  return mounts.filter(
    (m) =>
      m.startsWith(prefix) &&
      /^[^/]+\/node\//.test(m.slice(prefix.length)) &&
      m !== ownNodeDir &&
      !m.startsWith(`${ownNodeDir}/`),
  );
}

/** Unmounts everything at or under `dir`, deepest first (lazily, so a busy mount cannot block). */
export function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir)) run('umount', ['-l', m]);
}
