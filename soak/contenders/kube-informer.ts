// The kube-informer contender: a SharedIndexInformer over newListWatch, with the soak's handlers registered.

import { getEventListeners } from 'node:events';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import type { ReflectorErrorContext } from '../../src/reflector/index.js';
import { SOAK_RESOURCE, type SoakObject } from '../workload.js';
import { errorLabel, rvToBigInt, type Contender, type ContenderContext } from './types.js';

/**
 * Reflector tuning for a soak that packs hours of faults into seconds. These only shorten waits; the
 * defaults handle the same faults, later: watches are asked to time out after 2–3 s (default 5–10
 * min), a silent watch is declared stalled 0.5 s past that (default 30 s), and backoff starts at 100 ms,
 * caps at 500 ms and resets after 2 s without a failure (defaults 800 ms, 30 s, 2 min).
 */
export const KUBE_INFORMER_SOAK_TUNING = {
  minWatchTimeoutMs: 2_000,
  watchIdleMarginMs: 500,
  backoff: { initialMs: 100, maxMs: 500, resetAfterMs: 2_000 },
} as const;

/** Builds the kube-informer contender (not started). */
export function kubeInformerContender(ctx: ContenderContext): Contender {
  const lw = newListWatch<SoakObject>(ctx.server.kubeConfig, SOAK_RESOURCE);
  const byCode: Record<string, number> = {};
  let errors = 0;
  let restarts = 0;
  const informer = new SharedIndexInformer<SoakObject>(lw, {
    name: 'soak',
    logger: false, // the soak counts and reports every error itself (onWatchError below)
    onWatchError: (err: Error, context: ReflectorErrorContext) => {
      errors++;
      const label = errorLabel(err);
      byCode[label] = (byCode[label] ?? 0) + 1;
      if (context.action === 'relist' || context.action === 'rewatch') restarts++;
    },
    reflector: { ...KUBE_INFORMER_SOAK_TUNING, backoff: { ...KUBE_INFORMER_SOAK_TUNING.backoff } },
  });
  for (const { name, handler } of ctx.handlers) {
    informer.addEventHandler(
      {
        onAdd: (obj) => handler.onAdd(obj),
        onUpdate: (oldObj, newObj) => handler.onUpdate(oldObj, newObj),
        onDelete: (obj) => handler.onDelete(obj),
      },
      { name },
    );
  }
  const controller = new AbortController();
  let running: Promise<Error | undefined> | undefined;

  return {
    name: 'kube-informer',
    start() {
      running = informer.run(controller.signal).then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
    },
    synced: () => informer.hasSynced(),
    cache() {
      const out = new Map<string, string>();
      for (const key of informer.getStore().listKeys()) {
        const obj = informer.getStore().getByKey(key);
        out.set(key, obj?.metadata?.resourceVersion ?? '');
      }
      return out;
    },
    progressRv: () => rvToBigInt(informer.lastSyncResourceVersion()),
    stats: () => ({ errors, errorsByCode: { ...byCode }, restarts }),
    async stop() {
      controller.abort();
      return running === undefined ? undefined : await running;
    },
    leftoverListeners: () => getEventListeners(controller.signal, 'abort').length,
  };
}
