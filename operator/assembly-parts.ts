// The operator's parts as runnables (runtime/manager.ts), each with its place in the start
// and stop order: the endpoints first, then the caches, then leader election, then the
// controller and the leader's sweep of cordon marks. Stopping runs the other way: the
// controller finishes its in-flight reconciles and the sweep its pass, then the Lease is
// released, then the caches and endpoints close.

import type { Logger } from '../lib/log.ts';
import type { Controller } from './runtime/controller.ts';
import type { LeaderElector } from './runtime/leader.ts';
import type { Runnable } from './runtime/manager.ts';
import type { Servers } from './runtime/server.ts';
import { startMarkSweeper, type MarkSweepDeps, type MarkSweeper } from './mark-sweep.ts';
import type { Caches } from './assembly-caches.ts';

/** Names of the operator's parts, for the orders of parts added beside them. */
export const PART = {
  servers: 'servers',
  caches: 'caches',
  leaderElection: 'leader-election',
  controller: 'controller',
  markSweep: 'mark-sweep',
} as const;

/** The leadership this replica held was lost: the process ends (exit 1) and restarts as a standby. */
export class LeadershipLost extends Error {
  constructor() {
    super('lost the leader Lease');
  }
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** /metrics, /healthz and /readyz: listening first, closed last; `onListening` logs the ports. */
export function serversPart(
  listen: () => Promise<Servers>,
  onListening: (servers: Servers) => void,
): Runnable {
  return {
    name: PART.servers,
    stopAfter: [PART.leaderElection],
    async run(signal, ready) {
      const servers = await listen();
      onListening(servers);
      ready();
      await aborted(signal);
      await servers.close();
    },
  };
}

/** Every cache, listing and watching from the start; "caches synced" is logged once all are. */
export function cachesPart(caches: Caches, log: Logger): Runnable {
  const all = Object.entries(caches.all);
  return {
    name: PART.caches,
    startAfter: [PART.servers],
    stopAfter: [PART.leaderElection],
    async run(signal, ready) {
      void Promise.all(all.map(([, c]) => c.start())).then(() =>
        log.info('caches synced', Object.fromEntries(all.map(([resource, c]) => [resource, c.size]))),
      );
      ready();
      await aborted(signal);
      await Promise.all(all.map(([, c]) => c.stop()));
    },
  };
}

/** How leader election reports to the rest of the operator. */
export interface LeadershipHooks {
  /** `--leader-election-namespace/--leader-election-id`, for the log line while waiting. */
  readonly lease: string;
  /** The aiops leader gauge's on/off, when leader election is on. */
  readonly metric?: { on(): void; off(): void };
  /** Called once this replica leads (at once without an elector). */
  readonly onLeading: () => void;
  readonly log: Logger;
}

/**
 * Leader election: waits for the Lease (with an elector) and then runs as leader; fails with
 * LeadershipLost when a renewal misses the deadline. On stop it releases the Lease.
 */
export function leaderPart(elector: LeaderElector | undefined, h: LeadershipHooks): Runnable {
  return {
    name: PART.leaderElection,
    startAfter: [PART.caches],
    stopAfter: [PART.controller, PART.markSweep],
    async run(signal, ready) {
      let lose: (err: LeadershipLost) => void = () => undefined;
      const lost = new Promise<never>((_, reject) => (lose = reject));
      signal.addEventListener('abort', () => void elector?.release(), { once: true });
      try {
        if (elector) {
          h.log.info('waiting for leadership', { lease: h.lease });
          await elector.acquire(() => lose(new LeadershipLost()));
        }
        h.metric?.on();
        h.onLeading();
        ready();
        await Promise.race([aborted(signal), lost]);
      } catch (err) {
        if (err instanceof LeadershipLost) throw err;
        if (!signal.aborted) h.log.error('leader election failed', { error: (err as Error).message });
        await aborted(signal);
      } finally {
        await elector?.release();
        h.metric?.off();
      }
    },
  };
}

/** The controller's workers: started once leading and the caches synced; on stop, in-flight reconciles finish. */
export function controllerPart(controller: Controller, caches: Caches): Runnable {
  return {
    name: PART.controller,
    startAfter: [PART.leaderElection],
    async run(signal, ready) {
      await Promise.race([
        Promise.all(Object.values(caches.all).map((c) => c.waitForSettled())),
        aborted(signal),
      ]);
      if (!signal.aborted) {
        controller.start();
        ready();
        await aborted(signal);
      }
      await controller.stop();
    },
  };
}

/** The leader's sweep of stale cordon marks (mark-sweep.ts); `soon()` asks for a sweep while it runs. */
export function markSweepPart(deps: MarkSweepDeps, intervalMs: number): Runnable & { soon(): void } {
  let sweeper: MarkSweeper | undefined;
  return {
    name: PART.markSweep,
    startAfter: [PART.controller],
    soon: () => sweeper?.soon(),
    async run(signal, ready) {
      sweeper = startMarkSweeper(deps, intervalMs);
      ready();
      await aborted(signal);
      await sweeper.stop();
    },
  };
}
