// The two sides of the controller benchmark: the controller runtime, and the hand-written loop it replaces.
//
// Both read one shared informer of `resource` from the factory they are given, run `concurrency`
// reconciles at once and call `onReconcile(key, obj)` when a reconcile starts, with the object the
// cache holds then. The reconcile itself does nothing else.

import { Action, Controller } from '../../src/controller/index.js';
import type { KubeObject, ResourceDescriptor } from '../../src/core/index.js';
import type { TracerProviderLike } from '../../src/index.js';
import type { SharedInformerFactory } from '../../src/informer/index.js';
import { RateLimitingQueue } from '../../src/workqueue/index.js';

/** One side of the comparison. */
export interface Side {
  /** `'runtime'` or `'hand-written'`. */
  readonly name: SideName;
  /** Reconciles until `signal` aborts; `onReconcile` is called as each reconcile starts. */
  run(signal: AbortSignal, onReconcile: (key: string, obj: unknown) => void): Promise<void>;
}

/** The sides, by name. */
export type SideName = 'runtime' | 'hand-written';

/** The runtime with tracing on (keys/s only): its name in the results. */
export type TracedSideName = 'runtime-traced';

/** What both sides are built with. */
export interface SideOptions {
  /** Reconciles at once. */
  concurrency: number;
  /** The runtime's per-reconcile deadline (0 = off). The hand-written loop has none. */
  deadlineMs: number;
  /** The runtime's `tracerProvider` (the traced side). Default: none. */
  tracerProvider?: TracerProviderLike;
}

/** `Controller.for(factory, resource).build(noop, { concurrency })`. */
export function runtimeSide<T>(factory: SharedInformerFactory, resource: ResourceDescriptor<T>, options: SideOptions): Side {
  return {
    name: 'runtime',
    run: (signal, onReconcile) =>
      Controller.for(factory, resource)
        .build(
          async (key, ctx) => {
            onReconcile(key, ctx.object);
            return Action.done();
          },
          { concurrency: options.concurrency, logger: false, reconcileTimeoutMs: options.deadlineMs, tracerProvider: options.tracerProvider },
        )
        .run(signal),
  };
}

/**
 * An informer handler → `RateLimitingQueue` → `concurrency` workers (get, read the lister, reconcile,
 * forget, done): what examples/endpoints and examples/network-policy write by hand.
 */
export function handWrittenSide<T>(factory: SharedInformerFactory, resource: ResourceDescriptor<T>, options: SideOptions): Side {
  return {
    name: 'hand-written',
    run: async (signal, onReconcile) => {
      const informer = factory.forResource(resource);
      const queue = new RateLimitingQueue<string>();
      const key = (obj: unknown): string => {
        const m = (obj as KubeObject).metadata;
        return m?.namespace ? `${m.namespace}/${m.name}` : (m?.name ?? '');
      };
      const registration = informer.addEventHandler({
        onAdd: (obj) => queue.add(key(obj)),
        onUpdate: (_old, obj) => queue.add(key(obj)),
        onDelete: (obj) => queue.add(key(obj)),
      });
      signal.addEventListener('abort', () => queue.shutDown(), { once: true });
      await registration.whenSynced(signal).catch(() => undefined);
      const worker = async (): Promise<void> => {
        for (;;) {
          const { item, shutdown } = await queue.get();
          if (shutdown) return;
          try {
            onReconcile(item, informer.getIndexer().getByKey(item));
            await Promise.resolve(Action.done());
            queue.forget(item);
          } finally {
            queue.done(item);
          }
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      informer.removeEventHandler(registration);
    },
  };
}

/** The value at quantile `p` (0–1) of ascending `sorted`, NaN when empty. */
export function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

/** The median of `xs`. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}
