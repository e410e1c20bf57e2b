// The run loop both example controllers share: informers and workers with one fate.

import type { SharedInformerFactory } from '../../src/index.js';
import type { WorkQueue } from '../../src/workqueue/index.js';

/**
 * Starts every informer of `factory`, waits for their caches, then runs `workers` copies of `worker`
 * until `signal` aborts. Resolves after a clean stop (informers stopped, queue shut down, workers
 * returned); rejects with the informers' first failure — a handler error stops everything, by design.
 *
 * The factory's outcome is handled at once, so a failure during the sync wait is never an unhandled
 * rejection; whatever ends the informers also shuts the queue down, which lets the workers return.
 */
export async function runInformersAndWorkers<T>(
  factory: SharedInformerFactory,
  queue: WorkQueue<T>,
  workers: number,
  worker: () => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  const informers = factory.run(signal).then(
    () => undefined,
    (error: unknown) => {
      failure = { error };
    },
  );
  void informers.finally(() => queue.shutDown());
  const synced = await factory.waitForCacheSync(signal);
  const running = Object.values(synced).every(Boolean) ? Array.from({ length: Math.max(1, workers) }, worker) : [];
  await informers;
  queue.shutDown();
  await Promise.all(running);
  if (failure !== undefined) throw failure.error;
}
