// `node test/harness/demo-exporter-main.ts <port>`: npm start's demo exporter
// (demo_load{namespace="demo",deployment="web"}, moved with POST /load?value=N) as a process
// of its own on 127.0.0.1:<port>, so `npm run cluster -- up --prometheus` can run it detached
// beside the cluster and stop it by pid at `down`.
import { startDemoExporter } from '../../scripts/lib/demo-exporter.ts';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  process.stderr.write('usage: node test/harness/demo-exporter-main.ts <port>\n');
  process.exit(2);
}
const say = (msg: string): void => void process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
const exporter = await startDemoExporter(port, say);
say(`demo exporter on 127.0.0.1:${port}`);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    void exporter.close().then(() => process.exit(0));
  });
