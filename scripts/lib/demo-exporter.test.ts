// npm start's demo exporter: web's and the idle batch workers' load at their start values, each
// moved by its own POST, and a POST for a workload the demo does not have refused. The real
// server on a loopback port.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDemoExporter } from './demo-exporter.ts';
import { freePorts } from './ports.ts';

test('demo_load per workload: start values, moved one at a time, unknown ones refused', async (t) => {
  const [port = 0] = await freePorts(1);
  const said: string[] = [];
  const exporter = await startDemoExporter(port, (m) => said.push(m));
  t.after(() => exporter.close());
  const base = `http://127.0.0.1:${port}`;
  const series = async (): Promise<string[]> =>
    (await (await fetch(`${base}/metrics`)).text()).split('\n').filter((l) => l.startsWith('demo_load{'));
  const post = async (query: string): Promise<[number, string]> => {
    const res = await fetch(`${base}/load?${query}`, { method: 'POST' });
    return [res.status, await res.text()];
  };
  assert.deepEqual(await series(), [
    'demo_load{namespace="demo",deployment="web"} 0.3',
    'demo_load{namespace="demo",statefulset="batch"} 0.05',
  ]);
  assert.deepEqual(await post('value=0.95'), [200, 'demo_load{deployment="web"} = 0.95\n']);
  assert.deepEqual(await post('statefulset=batch&value=0.6'), [
    200,
    'demo_load{statefulset="batch"} = 0.6\n',
  ]);
  for (const bad of ['value=high', 'statefulset=cache&value=0.6', 'statefulset=a"}&value=1'])
    assert.equal((await post(bad))[0], 400, bad);
  assert.deepEqual(await series(), [
    'demo_load{namespace="demo",deployment="web"} 0.95',
    'demo_load{namespace="demo",statefulset="batch"} 0.6',
  ]);
  assert.deepEqual(said, [
    'demo_load{deployment="web"} set to 0.95',
    'demo_load{statefulset="batch"} set to 0.6',
  ]);
});
