// Where a memory cgroup is made and what is written to it, on tables of what machines say;
// then on this machine (as root, as the suites run): Node under a cgroup sizes its heap from
// it, a process past the limit is OOM-killed and counted, and the cgroup is gone afterwards.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import {
  createMemoryCgroup,
  heapLimitUnder,
  limitWrites,
  memoryCgroupLayout,
  oomKills,
  type CgroupFacts,
} from './memory-cgroup.ts';

const V1_SELF = '9:name=systemd:/\n4:memory:/runner/job\n0::/\n';

test('the layout: v2 with memory at the root, else v1 beside this process, else why not', () => {
  const table: [CgroupFacts, ReturnType<typeof memoryCgroupLayout>][] = [
    [
      { v2Controllers: 'cpuset cpu io memory pids\n', v1Memory: false, selfCgroup: '0::/a\n' },
      { version: 2, parent: '/sys/fs/cgroup' },
    ],
    [
      { v2Controllers: 'cpu io pids\n', v1Memory: true, selfCgroup: V1_SELF },
      { version: 1, parent: '/sys/fs/cgroup/memory/runner/job' },
    ],
    [
      { v2Controllers: undefined, v1Memory: true, selfCgroup: '3:cpu,memory:/\n' },
      { version: 1, parent: '/sys/fs/cgroup/memory/' },
    ],
  ];
  for (const [facts, layout] of table) assert.deepEqual(memoryCgroupLayout(facts), layout);
  const whyNot: [CgroupFacts, RegExp][] = [
    [{ v2Controllers: 'cpu\n', v1Memory: false, selfCgroup: '0::/\n' }, /^neither/],
    [{ v2Controllers: undefined, v1Memory: true, selfCgroup: '0::/\n' }, /no memory cgroup/],
  ];
  for (const [facts, why] of whyNot) {
    const layout = memoryCgroupLayout(facts);
    assert.ok(typeof layout === 'string', JSON.stringify(layout));
    assert.match(layout, why);
  }
});

test('the limit files: the limit first, then swap where the kernel accounts it', () => {
  const all = (): boolean => true;
  const none = (): boolean => false;
  assert.deepEqual(limitWrites(2, 1024, all), [
    ['memory.max', '1024'],
    ['memory.swap.max', '0'],
  ]);
  assert.deepEqual(limitWrites(2, 1024, none), [['memory.max', '1024']]);
  assert.deepEqual(limitWrites(1, 1024, all), [
    ['memory.limit_in_bytes', '1024'],
    ['memory.memsw.limit_in_bytes', '1024'],
  ]);
  assert.deepEqual(limitWrites(1, 1024, none), [['memory.limit_in_bytes', '1024']]);
});

test('the OOM kill count of v2 memory.events and v1 memory.oom_control', () => {
  assert.equal(oomKills('low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n'), 1);
  assert.equal(oomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n'), 3);
  assert.equal(oomKills('oom_kill_disable 0\nunder_oom 0\n'), 0);
});

test('Node under a 384 MiB cgroup sizes its heap below the limit', async () => {
  const bytes = await heapLimitUnder(384, ['--max-semi-space-size=1']);
  assert.ok(bytes > 128 * 2 ** 20 && bytes < 384 * 2 ** 20, `heap_size_limit ${bytes} bytes`);
});

test('a process past the limit is OOM-killed from its first instruction, and counted', async () => {
  const cgroup = createMemoryCgroup(64);
  try {
    const [command, args] = cgroup.wrap(process.execPath, [
      '-e',
      'const a = []; for (;;) a.push(Buffer.alloc(2 ** 20, 1));',
    ]);
    const child = spawn(command, args, { stdio: 'ignore' });
    const signal = await new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, s) => r(s)));
    assert.equal(signal, 'SIGKILL');
    assert.equal(cgroup.oomKills(), 1);
  } finally {
    await cgroup.remove();
  }
  assert.equal(existsSync(cgroup.path), false);
});
