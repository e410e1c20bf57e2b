// kube-informer/sharding: one slice of a collection per replica. Shard selectors (server-side sharded
// list and watch, KEP-5866) and the shard ring that hands slots to replicas over Leases.

export {
  HASH_SPACE,
  ShardSelectorError,
  evenRange,
  evenShard,
  formatShardSelector,
  parseShardSelector,
  shardFieldValue,
  shardHash,
  shardMatcher,
  shardSelector,
  type HashRange,
  type ShardField,
  type ShardSelector,
} from '../core/shard-selector.js';

export { ShardRing } from './ring.js';
export type { ShardRingHealth, ShardRingOptions } from './ring-options.js';
export { assignSlots } from './assign.js';
export { InMemoryRingStore, LeaseRingStore, RING_LABEL, RingConflictError, type LeaseRingStoreOptions, type RingLease, type RingStore } from './store.js';
export { ShardedInformer, type ShardedIndexer, type ShardedInformerOptions } from './sharded-informer.js';
