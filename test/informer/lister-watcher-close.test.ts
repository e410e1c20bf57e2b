// Whoever creates a ListerWatcher owns its close(), and calls it exactly once.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { newInformer, SharedIndexInformer, SharedInformerFactory } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections, pod, type Pod } from './helpers.js';

failOnUnhandledRejections();

/** A fake source whose `close()` calls are counted. */
function closable(): ListerWatcher<Pod> & { closes: number } {
  const source = new FakeControllerSource<Pod>();
  source.add(pod('a'));
  const lw = {
    closes: 0,
    list: source.list.bind(source),
    watch: source.watch.bind(source),
    close: () => void lw.closes++,
  };
  return lw;
}

async function runUntilSynced(informer: SharedIndexInformer<Pod>): Promise<void> {
  const ac = new AbortController();
  const done = informer.run(ac.signal);
  await informer.whenSynced();
  ac.abort();
  await done;
}

describe('closing the ListerWatcher', () => {
  it('a SharedIndexInformer given a ListerWatcher owns it by default: close() once, after it stopped', async () => {
    const lw = closable();
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock(), logger: false });
    await runUntilSynced(informer);
    expect(lw.closes).toBe(1);
  });

  it('closeListerWatcher: false leaves it to its creator', async () => {
    const lw = closable();
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock(), logger: false, closeListerWatcher: false });
    await runUntilSynced(informer);
    expect(lw.closes).toBe(0);
  });

  it('a bare informer (newInformer) closes its ListerWatcher once', async () => {
    const lw = closable();
    const { controller } = newInformer<Pod>(lw, {}, { clock: new FakeClock() });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    for (let i = 0; i < 20 && !controller.hasSynced(); i++) await new Promise((resolve) => setImmediate(resolve));
    expect(controller.hasSynced()).toBe(true);
    ac.abort();
    await done;
    expect(lw.closes).toBe(1);
  });

  it('the factory creates the ListerWatcher of each informer, so the factory closes it, once', async () => {
    const created: Array<ReturnType<typeof closable>> = [];
    const factory = new SharedInformerFactory(undefined, {
      logger: false,
      informerOptions: { clock: new FakeClock() },
      listWatchFor: () => {
        const lw = closable();
        created.push(lw);
        return lw as unknown as ListerWatcher<unknown>;
      },
    });
    factory.forResource<Pod>({ group: '', version: 'v1', resource: 'pods' });
    factory.forResource<Pod>({ group: 'apps', version: 'v1', resource: 'deployments' });
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    ac.abort();
    await running;
    expect(created.map((lw) => lw.closes)).toEqual([1, 1]);
  });
});
