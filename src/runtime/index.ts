// The runtime room's barrel: what everything that runs is built on — the runnable group, backoff, the ring buffer, the keyed delayed queue, the fixed-length deadlines, the token bucket.

export { RunGroup, type Runnable, type RunGroupOptions, type RunGroupResult } from './run-group.js';
export {
  Backoff,
  defaultRandom,
  exponentialDelay,
  FailureCounts,
  ItemBackoff,
  jittered,
  jitteredAround,
  resolveBackoffOptions,
  type BackoffOptions,
  type ItemBackoffOptions,
  type RandomSource,
  type ResolvedBackoffOptions,
} from './backoff.js';
export { RingBuffer } from './ring-buffer.js';
export { DelayQueue, type DelayedKey, type DelayQueueOptions } from './delay-queue.js';
export { Deadlines } from './deadlines.js';
export { TokenBucket } from './token-bucket.js';
// For the reflector's option check; not in an entry point.
export { BACKOFF_OPTION_SCHEMA } from './backoff.js';
