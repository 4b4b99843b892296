// Records Kubernetes Events (events.k8s.io/v1) on AITasks, so `kubectl describe` and
// `kubectl aiops describe` show every decision, action and skip with its reason.
// Recording is best effort: a failed Event is logged, never fails the reconcile. It also
// reads the reasons of recent Events about a target, for the LLM advisor's context. Text
// fields are cut to the apiserver's limits in UTF-8 bytes (cutUtf8), so a long multi-byte
// note is shortened instead of refused.

import { randomBytes } from 'node:crypto';
import { DEFAULT_PAGE_BYTES, pageSizeFor, ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { microTime, Resources, type KubeEvent, type Workload } from '../runtime/kinds.ts';
import { rulesOf } from '../runtime/target-kinds.ts';
import type { Logger } from '../../lib/log.ts';
import type { EventSpec } from '../decision/vocabulary.ts';

/** `reportingController` of every Event the operator writes. */
export const REPORTING_CONTROLLER = 'aiops.example.com/operator';

/** Most bytes (UTF-8) of an Event's `note` the apiserver accepts (events.k8s.io/v1: 1 KiB). */
export const NOTE_MAX_BYTES = 1024;

/**
 * Most Events read for one target's recent reasons: 100, in pages of
 * pageSizeFor(DEFAULT_PAGE_BYTES) (10) whose answers are bounded, only the reasons kept.
 */
export const MAX_EVENTS_READ = 100;

/** Most bytes (UTF-8) of an Event's `action` and `reason` the apiserver accepts. */
const ACTION_REASON_MAX_BYTES = 128;

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a
 * code point (a surrogate pair stays whole or goes whole). The apiserver measures these
 * limits in bytes: a cut by UTF-16 units lets a multi-byte note through too long, and the
 * whole Event is refused.
 */
export function cutUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(Math.max(0, maxBytes)));
  return text.slice(0, read);
}

/** `<object name>.<hex nanoseconds><random>`, as kubectl's recorder names Events. */
function eventName(object: string): string {
  const ns = process.hrtime.bigint() + BigInt(Date.now()) * 1_000_000n;
  return `${object.slice(0, 200)}.${ns.toString(16)}${randomBytes(2).toString('hex')}`;
}

/** Writes Events about AITasks. */
export class EventRecorder {
  readonly #events: ResourceClient<KubeEvent>;
  readonly #instance: string;
  readonly #log: Logger;

  /** `instance` is the operator's identity (pod or host name), ≤ 128 characters. */
  constructor(transport: KubeTransport, instance: string, log: Logger) {
    this.#events = new ResourceClient(transport, Resources.events);
    this.#instance = instance.slice(0, 128);
    this.#log = log;
  }

  /**
   * Reasons of Events of the last hour about `target`, its pods and, for a Deployment, its
   * ReplicaSets (by name prefix); at most MAX_EVENTS_READ Events are read, a page at a time.
   * Best effort: [] on error.
   */
  async recentReasons(target: Workload, now: number): Promise<string[]> {
    const namespace = target.metadata.namespace ?? '';
    const name = target.metadata.name ?? '';
    try {
      const rules = rulesOf(target);
      const kinds = new Set<string>([rules.kind, 'Pod', ...(rules.via === 'ReplicaSet' ? [rules.via] : [])]);
      const reasons: string[] = [];
      let read = 0;
      await this.#events.forEachPage(namespace, { limit: pageSizeFor(DEFAULT_PAGE_BYTES) }, (items) => {
        for (const e of items.slice(0, MAX_EVENTS_READ - read))
          if (
            kinds.has(e.regarding.kind) &&
            (e.regarding.name === name || e.regarding.name.startsWith(`${name}-`)) &&
            Date.parse(e.eventTime || e.metadata.creationTimestamp || '') > now - 3_600_000
          )
            reasons.push(e.reason);
        read += items.length;
        return read < MAX_EVENTS_READ;
      });
      return reasons;
    } catch (err) {
      this.#log.warn('cannot read events', { namespace, error: String(err) });
      return [];
    }
  }

  /** Records `specs` on `task`; failures are logged at warn level. */
  async record(
    task: Pick<v2.AITask, 'apiVersion' | 'kind' | 'metadata'>,
    specs: readonly EventSpec[],
  ): Promise<void> {
    const { namespace, name, uid } = task.metadata;
    if (namespace === undefined || name === undefined) return;
    await Promise.all(
      specs.map(async (s) => {
        const ev: KubeEvent = {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: eventName(name), namespace },
          eventTime: microTime(new Date()),
          reportingController: REPORTING_CONTROLLER,
          reportingInstance: this.#instance,
          action: cutUtf8(s.action, ACTION_REASON_MAX_BYTES),
          reason: cutUtf8(s.reason, ACTION_REASON_MAX_BYTES),
          type: s.type,
          note: cutUtf8(s.note, NOTE_MAX_BYTES),
          regarding: {
            apiVersion: task.apiVersion,
            kind: task.kind,
            name,
            namespace,
            ...(uid !== undefined ? { uid } : {}),
          },
        };
        try {
          await this.#events.create(namespace, ev);
        } catch (err) {
          this.#log.warn('cannot record event', {
            key: `${namespace}/${name}`,
            reason: s.reason,
            error: String(err),
          });
        }
      }),
    );
  }
}
