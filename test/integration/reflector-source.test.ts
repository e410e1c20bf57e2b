// The reflector over the test kit's FakeControllerSource: random changes, missed events and expired watches.
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { Reflector } from '../../src/reflector/index.js';
import { FakeControllerSource } from '../../src/testing/index.js';
import { RecordingLW, RecordingStore, pod, seededRandom } from '../reflector/helpers.js';
import type { Pod } from '../reflector/helpers.js';

const settle = (): Promise<void> => flushPromises(6);

describe('Reflector over FakeControllerSource', () => {
  it('ends equal to the source after random changes, dropped events, 410s and reset watches', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const rand = seededRandom(seed);
      const source = new FakeControllerSource<Pod>();
      const lw = new RecordingLW<Pod>(source);
      const store = new RecordingStore<Pod>();
      const clock = new FakeClock();
      const reflector = new Reflector<Pod>(lw, store, { clock, random: seededRandom(seed + 99) });
      const controller = new AbortController();
      const running = reflector.run(controller.signal);
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      const present = new Set<string>();
      for (let step = 0; step < 150; step++) {
        const name = names[Math.floor(rand() * names.length)];
        const drop = rand() < 0.15;
        const r = rand();
        if (r < 0.75) {
          const obj = pod(name, undefined, { spec: { step } });
          if (present.has(name)) (drop ? source.modifyDropWatch(obj) : source.modify(obj));
          else {
            if (drop) source.addDropWatch(obj);
            else source.add(obj);
            present.add(name);
          }
        } else if (r < 0.9 && present.has(name)) {
          if (drop) source.deleteDropWatch(pod(name));
          else source.delete(pod(name));
          present.delete(name);
        } else if (r < 0.95) {
          source.sendError(410);
        } else {
          source.resetWatch();
        }
        await settle();
        await clock.advance(Math.floor(rand() * 5000));
      }
      // A dropped event is only seen on relist: end with one, then let the backoff run out.
      source.sendError(410);
      for (let i = 0; i < 10; i++) await clock.advance(10_000);
      const truth = Object.fromEntries(source.items().map((o) => [o.metadata.name, o.metadata.resourceVersion]));
      expect(store.snapshot(), `seed ${seed}`).toEqual(truth);
      expect(reflector.lastSyncResourceVersion(), `seed ${seed}`).toBe(source.resourceVersion());
      expect(lw.backwardRequests(), `seed ${seed}`).toEqual([]);
      controller.abort();
      await running;
      await settle();
      expect(clock.pendingTimers(), `seed ${seed}`).toBe(0);
      expect(source.openWatches(), `seed ${seed}`).toBe(0);
    }
  });
});
