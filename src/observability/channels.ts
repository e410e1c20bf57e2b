// diagnostics_channel names the library publishes on, one place for all of them.

import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Every `diagnostics_channel` the library publishes on. Subscribe with
 * `diagnostics_channel.subscribe(channels.reflectorError, (msg) => ...)`. Publishing costs nothing
 * when nobody subscribes. The `reflector*` channels re-publish a reflector's typed events
 * (`reflector.events`), so they say exactly what its counters and hooks hear.
 */
export const channelNames = {
  /**
   * `{ name, error, phase, action }`: a reflector's `error` event (a failure it recovers from, a
   * warning, a skipped event), or a hook, listener or ListerWatcher `close()` that threw (phase `hook`
   * or `close`, action `warn`).
   */
  reflectorError: 'kube-informer:reflector:error',
  /** A `RegressionInfo` (`{ name, key, eventType, heldResourceVersion, eventResourceVersion, reason, … }`): the `regression` event. */
  reflectorRegression: 'kube-informer:reflector:regression',
  /** `{ name, resourceVersion, items }`: the `listed` event (a complete list handed to the store). */
  reflectorList: 'kube-informer:reflector:list',
  /** `{ name, resourceVersion }`: the `watchOpened` event. */
  reflectorWatchStart: 'kube-informer:reflector:watch-start',
  /** `{ name, reason }`: the `watchEnded` event (`closed`, `stalled`, `aborted`, `stopped`, `error`). */
  reflectorWatchEnd: 'kube-informer:reflector:watch-end',
  /** `{ name, error }`: a handler failed. */
  informerHandlerError: 'kube-informer:informer:handler-error',
  /** `{ key, diff }`: the mutation detector found a changed cached object. */
  cacheMutation: 'kube-informer:mutation:detected',
  /** `{ name, event, ... }`: work-queue metrics events (add, get, done, retry). */
  workqueue: 'kube-informer:workqueue',
  /** `{ name, event, identity, leader }`: leader-election transitions. */
  leaderElection: 'kube-informer:leaderelection',
  /**
   * `{ method, path, error }`: a GET or HEAD that failed on a reused keep-alive connection before any
   * answer (the server had closed it while idle) and is being sent again on a fresh one.
   */
  transportRetry: 'kube-informer:transport:retry',
  /**
   * `{ path, selector }`: a list came back without `metadata.shardInfo` — the server did not apply the
   * `shard` option (feature gate `ShardedListAndWatch` off, or a server older than 1.36) — so this
   * ListerWatcher filters its shard on the client from now on. Published once per ListerWatcher.
   */
  shardFallback: 'kube-informer:sharding:fallback',
  /** `{ name, identity, owned }`: the slots a shard ring's replica owns changed (`owned` ascending). */
  shardRing: 'kube-informer:sharding:ring',
} as const;

/** The channels themselves, ready to `publish` on (check `hasSubscribers` first on hot paths). */
export const channels = Object.fromEntries(
  Object.entries(channelNames).map(([k, v]) => [k, diagnosticsChannel.channel(v)]),
) as { readonly [K in keyof typeof channelNames]: diagnosticsChannel.Channel };

/** Publishes `message` on `channel` only when someone listens, so the hot path pays nothing otherwise. */
export function publish(channel: diagnosticsChannel.Channel, message: unknown): void {
  if (channel.hasSubscribers) channel.publish(message);
}
