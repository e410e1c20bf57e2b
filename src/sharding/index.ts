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
