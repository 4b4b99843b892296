// Attack: peers that hold the conversion webhook with slow requests. From two loopback
// addresses of their own (127.0.0.2 and 127.0.0.3; all of 127/8 is loopback), four TLS
// connections to the hosted webhook send only headers — two declaring 8 MiB and 2 MiB bodies
// that never come, two whose headers never end — and reconnect each time the webhook answers
// 408 or closes. Meanwhile every read of alice's AITask at v1 (through the real apiserver, which
// calls the webhook to convert it from the stored v2) succeeds: a stalled request takes no
// slot, its deadline follows its size, and one address holds only its own share.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { test } from 'node:test';
import { eventually } from '../support/operator.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** One attacker: what it sends on each connection, from which address; counts the webhook's answers. */
interface Attacker {
  readonly from: string;
  readonly head: string;
}

/**
 * Runs `a` until `stop()`: connects, sends its head and nothing more, and reconnects when the
 * webhook closes the connection. `cutOffs()` counts the connections the webhook ended.
 */
function attack(port: number, ca: string, a: Attacker): { cutOffs: () => number; stop: () => void } {
  let ended = 0;
  let stopped = false;
  let socket: tls.TLSSocket | undefined;
  const connect = (): void => {
    if (stopped) return;
    const s = tls.connect({
      socket: net.connect({ host: '127.0.0.1', port, localAddress: a.from }),
      ca,
      servername: 'localhost',
    });
    socket = s;
    s.on('secureConnect', () => s.write(a.head));
    s.on('data', () => undefined);
    s.on('error', () => undefined);
    s.on('close', () => {
      ended++;
      setImmediate(connect);
    });
  };
  connect();
  return {
    cutOffs: () => ended,
    stop: () => {
      stopped = true;
      socket?.destroy();
    },
  };
}

const bodyNeverComes = (bytes: number): string =>
  `POST /convert HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`;
const headersNeverEnd = 'POST /convert HTTP/1.1\r\nHost: webhook\r\nContent-Length: 2097152\r\nX-Slow: ';

test('slow headers and bodies from two addresses, reconnecting on 408: every read of alice at v1 succeeds', async () => {
  await stage.alice.tasks.create(stage.alice.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'read-me' },
    spec: {
      target: { kind: 'Deployment', name: 'app' },
      trigger: { query: 'max(attack_load{deployment="app"})', threshold: 1000 },
      remediation: { action: 'Noop' },
    },
  });
  const attackers = [
    { from: '127.0.0.2', head: bodyNeverComes(8 * 1024 * 1024) },
    { from: '127.0.0.2', head: bodyNeverComes(2 * 1024 * 1024) },
    { from: '127.0.0.3', head: headersNeverEnd },
    { from: '127.0.0.3', head: bodyNeverComes(8 * 1024 * 1024) },
  ].map((a) => attack(stage.webhook.port, stage.webhook.ca, a));
  try {
    const reads: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await stage.alice.tasksV1.get(stage.alice.namespace, 'read-me');
      assert.equal(t.apiVersion, 'aiops.example.com/v1');
      reads.push(t.metadata.name ?? '');
    }
    // The attack ran all along: every attacker was cut off and came back at least once; reads go on meanwhile.
    await eventually(
      'every attacker cut off by a deadline and reconnected',
      async () => {
        const t = await stage.alice.tasksV1.get(stage.alice.namespace, 'read-me');
        reads.push(t.metadata.name ?? '');
        return attackers.every((a) => a.cutOffs() >= 1) ? true : undefined;
      },
      90_000,
    );
    assert.ok(reads.length >= 6, `${reads.length} reads at v1, all succeeded`);
  } finally {
    for (const a of attackers) a.stop();
  }
  await undisturbed();
});
