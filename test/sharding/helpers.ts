// Shared by the shard ring tests: a Lease store that can be cut off, and a wait that moves a fake clock.

import type { FakeClock } from '../../src/core/clock.js';
import type { RingLease, RingStore } from '../../src/sharding/index.js';
import { until } from '../examples/helpers.js';

/** A {@link RingStore} whose every call fails while `cut` is set: a partition, or a server that is down. */
export class CuttableStore implements RingStore {
  cut = false;
  constructor(readonly inner: RingStore) {}
  list(): Promise<RingLease[]> {
    return this.cut ? Promise.reject(new Error('connection refused')) : this.inner.list();
  }
  write(name: string, holder: string, version: string | undefined): Promise<void> {
    return this.cut ? Promise.reject(new Error('connection refused')) : this.inner.write(name, holder, version);
  }
}

/** Advances `clock` in 250 ms steps (letting real I/O run between them) until `holds()`; throws with `what` otherwise. */
export async function settle(clock: FakeClock, what: string, holds: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !holds(); i++) {
    await clock.advance(250);
    await until(() => true, 'a turn');
  }
  await until(holds, what);
}
