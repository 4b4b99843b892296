// A TCP forwarder, run as its own process by the harness: the kubelet, kube-proxy and pods
// reach the apiserver (which listens on 127.0.0.1 only) through the host end of the node's
// link. Usage: node forwarder.ts LISTEN_HOST:PORT TARGET_HOST:PORT
import * as net from 'node:net';

const [listen = '', target = ''] = process.argv.slice(2);
const split = (hp: string): [string, number] => {
  const i = hp.lastIndexOf(':');
  return [hp.slice(0, i), Number(hp.slice(i + 1))];
};
const [lhost, lport] = split(listen);
const [thost, tport] = split(target);
if (!lhost || !thost || !lport || !tport) {
  process.stderr.write('usage: forwarder.ts LISTEN_HOST:PORT TARGET_HOST:PORT\n');
  process.exit(2);
}
const server = net.createServer((client) => {
  const upstream = net.connect(tport, thost);
  client.pipe(upstream).pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
server.listen(lport, lhost, () => process.stderr.write(`forwarding ${listen} -> ${target}\n`));
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
