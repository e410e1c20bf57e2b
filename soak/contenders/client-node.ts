// The client-node contender: @kubernetes/client-node's makeInformer, restarted on error as its README shows.

import { CoreV1Api, makeInformer, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node';
import type { SoakObject } from '../workload.js';
import { errorLabel, rvToBigInt, type Contender, type ContenderContext } from './types.js';

/**
 * client-node's informer stops for good on any error but a 410; its documentation restarts it from
 * the `error` callback after a delay (5 s in the README). The soak uses 500 ms, in line with the
 * kube-informer contender's short backoff.
 */
export const CLIENT_NODE_RESTART_DELAY_MS = 500;

/** Builds the client-node contender (not started). */
export function clientNodeContender(ctx: ContenderContext): Contender {
  const kc = ctx.server.kubeConfig;
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/configmaps', () => api.listConfigMapForAllNamespaces());
  // makeInformer returns a ListWatch; its typed interface leaves out latestResourceVersion().
  const rv = (): string => (informer as unknown as { latestResourceVersion(): string }).latestResourceVersion();
  const byCode: Record<string, number> = {};
  let errors = 0;
  let restarts = 0;
  let stopped = false;
  let synced = false;
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  const asSoak = (obj: KubernetesObject): SoakObject => obj as unknown as SoakObject;

  for (const { handler } of ctx.handlers) {
    // client-node calls handlers synchronously and ignores what they return; a rejection would be
    // unhandled, so the soak's recorders never reject.
    informer.on('add', (obj) => void handler.onAdd(asSoak(obj)));
    informer.on('update', (obj) => void handler.onUpdate(undefined, asSoak(obj)));
    informer.on('delete', (obj) => void handler.onDelete(asSoak(obj)));
  }
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    errors++;
    const label = errorLabel(err);
    byCode[label] = (byCode[label] ?? 0) + 1;
    if (restartTimer !== undefined) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (stopped) return;
      restarts++;
      informer.start().catch(() => undefined);
    }, CLIENT_NODE_RESTART_DELAY_MS);
  });

  return {
    name: 'client-node',
    start() {
      informer.start().catch(() => undefined);
    },
    synced() {
      // The informer has listed once it holds a resource version (it drops it only after a 410).
      if (!synced && rv() !== '') synced = true;
      return synced;
    },
    cache() {
      const out = new Map<string, string>();
      for (const obj of informer.list()) {
        const m = obj.metadata;
        out.set(m?.namespace ? `${m.namespace}/${m.name}` : String(m?.name), m?.resourceVersion ?? '');
      }
      return out;
    },
    progressRv: () => rvToBigInt(rv()),
    stats: () => ({ errors, errorsByCode: { ...byCode }, restarts }),
    async stop() {
      stopped = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      restartTimer = undefined;
      await informer.stop();
      return undefined;
    },
    leftoverListeners: () => 0,
  };
}
