// Shared fixtures of the informer tests: pods, a recording handler, and waits that never sleep for real.

import { flushPromises } from '../../src/core/clock.js';
import { DeletedFinalStateUnknown } from '../../src/core/keys.js';
import type { KubeObject } from '../../src/core/types.js';
import type { ResourceEventHandler } from '../../src/informer/handler.js';
export { seededRandom as prng } from '../../src/testing/random.js';
export { failOnUnhandledRejections } from '../helpers/async.js';

/** A minimal pod. */
export interface Pod extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [k: string]: unknown };
  spec?: { nodeName?: string; [k: string]: unknown };
}

/** A pod named `name` in namespace `ns` (default `default`). */
export function pod(name: string, extra: Partial<Pod['metadata']> = {}, ns = 'default'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, ...extra } };
}

/** One recorded callback. */
export type Recorded =
  | { type: 'add'; name: string; initial: boolean; rv?: string }
  | { type: 'update'; name: string; oldRv?: string; rv?: string }
  | { type: 'delete'; name: string; tombstone: boolean };

function nameOf(obj: unknown): string {
  const o = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
  return String((o as Pod | undefined)?.metadata?.name ?? '');
}

/** A handler that records every callback, in order. */
export class Recorder implements ResourceEventHandler<Pod> {
  readonly events: Recorded[] = [];
  onAdd(obj: Pod, isInInitialList: boolean): void {
    this.events.push({ type: 'add', name: obj.metadata.name, initial: isInInitialList, rv: obj.metadata.resourceVersion });
  }
  onUpdate(oldObj: Pod, newObj: Pod): void {
    this.events.push({ type: 'update', name: newObj.metadata.name, oldRv: oldObj.metadata.resourceVersion, rv: newObj.metadata.resourceVersion });
  }
  onDelete(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    this.events.push({ type: 'delete', name: nameOf(obj), tombstone: obj instanceof DeletedFinalStateUnknown });
  }
  /** Names seen in adds and updates (client-go's testListener set). */
  names(): string[] {
    return [...new Set(this.events.filter((e) => e.type !== 'delete').map((e) => e.name))].sort();
  }
  clear(): void {
    this.events.length = 0;
  }
}

/**
 * Flushes promise chains until `cond()` holds; fails after `turns` rounds. Uses setImmediate turns,
 * never timers: time stands still on the FakeClock meanwhile.
 */
export async function until(cond: () => boolean, what = 'condition', turns = 500): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
