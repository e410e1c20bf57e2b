// A ListerWatcher whose watch events can be held back: a watch that lags behind the writes (read-your-writes tests, on the fake and on kube-apiserver).

import type { ListerWatcher, WatchEvent } from '../../src/listwatch/types.js';

/** Wraps `lw`: while held, its watch streams deliver nothing; `release` lets the held events through in order. */
export function delayable(lw: ListerWatcher<unknown>): { lw: ListerWatcher<unknown>; hold(): void; release(): void } {
  let held = false;
  const waiting: Array<() => void> = [];
  const wrapped: ListerWatcher<unknown> = {
    list: (options, signal) => lw.list(options, signal),
    watch: async (options, signal) => {
      const events = await lw.watch(options, signal);
      return {
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<unknown>> {
          for await (const event of events) {
            while (held) await new Promise<void>((resolve) => waiting.push(resolve));
            yield event;
          }
        },
      };
    },
  };
  return {
    lw: wrapped,
    hold: () => void (held = true),
    release: () => {
      held = false;
      for (const resume of waiting.splice(0)) resume();
    },
  };
}
