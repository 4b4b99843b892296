// `npm run cluster -- up --prometheus` without a real node, as a developer runs it (its own
// cluster dir, a free Prometheus port): Prometheus on 127.0.0.1 returns the demo gauge with its
// namespace label and follows a POST to the exporter, `status` lists both processes and the URL,
// and `down` stops them with the cluster. Both listen on loopback only.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEMO_SERIES } from './local-prometheus.ts';
import { HARNESS_DIR } from './paths.ts';
import { isRunning } from './process.ts';
import { readState } from './state.ts';
import { eventually } from './wait.ts';

/** Runs the CLI with `args` in the cluster dir `dir`; exit code, stdout and stderr. */
function cli(dir: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [join(HARNESS_DIR, 'cli.ts'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, AIOPS_CLUSTER_DIR: dir, AIOPS_PROMETHEUS_PORT: '0' },
    timeout: 180_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The first sample's value of the instant query `promql`, if any. */
async function sample(url: string, promql: string): Promise<number | undefined> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
  const v = body.data.result[0]?.value[1];
  return v === undefined ? undefined : Number(v);
}

void test(
  'cluster up --prometheus: a Prometheus on 127.0.0.1 scraping the demo exporter, listed by status, stopped by down',
  { timeout: 240_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'aiops-cli-'));
    const dir = join(root, 'cluster');
    try {
      const upped = cli(dir, 'up', '--prometheus');
      assert.equal(upped.code, 0, upped.err);
      assert.match(upped.out, /^export KUBECONFIG=\S+\n$/);
      const state = await readState(dir);
      const prometheus = state?.prometheus;
      assert.ok(state && prometheus, `state records the Prometheus:\n${upped.err}`);
      assert.match(prometheus.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(upped.err.includes(`Prometheus: ${prometheus.url}`), upped.err);
      const extra = state.components.filter((c) => c.name === 'prometheus' || c.name === 'demo-exporter');
      assert.equal(extra.length, 2);

      // The operator adds namespace="<target ns>" to a trigger's query: the gauge carries it.
      assert.equal(await sample(prometheus.url, DEMO_SERIES), 0.3);
      await fetch(`${prometheus.exporterUrl}/load?value=0.95`, { method: 'POST' });
      await eventually(
        'Prometheus to scrape the new value',
        async () => ((await sample(prometheus.url, DEMO_SERIES)) === 0.95 ? true : undefined),
        120_000,
      );

      const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => extra.some((c) => l.includes(`pid=${c.pid},`)));
      assert.equal(listening.length >= 2, true, `both listen:\n${listening.join('\n')}`);
      for (const l of listening) assert.match(l, /^\S+\s+\d+\s+\d+\s+127\.0\.0\.1:\d+ /, l);

      const status = cli(dir, 'status');
      assert.equal(status.code, 0, status.err);
      for (const c of extra) assert.match(status.err, new RegExp(`${c.name}\\s+pid ${c.pid}\\s+running`));
      assert.ok(status.err.includes(prometheus.url), status.err);

      const downed = cli(dir, 'down');
      assert.equal(downed.code, 0, downed.err);
      for (const c of state.components) assert.ok(!isRunning(c.pid, c.binary), `${c.name} stopped`);
      assert.equal(existsSync(dir), false);
    } finally {
      if (existsSync(dir)) cli(dir, 'down');
      rmSync(root, { recursive: true, force: true });
    }
  },
);
