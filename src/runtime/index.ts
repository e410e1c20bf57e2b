// The runtime room's barrel: what runs below the controller — backoff, ring buffer, delayed queue.
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
export { DelayQueue, type DelayedKey } from './delay-queue.js';
export { TokenBucket } from './token-bucket.js';
