// diagnostics_channel names the library publishes on, one place for all of them.

import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Every `diagnostics_channel` the library publishes on. Subscribe with
 * `diagnostics_channel.subscribe(channels.reflectorError, (msg) => ...)`. Publishing costs nothing
 * when nobody subscribes. Message shapes are documented where each channel is published.
 */
export const channelNames = {
  /** `{ name, error }`: a list or watch failed; the reflector backs off and retries. */
  reflectorError: 'kube-informer:reflector:error',
  /** `{ name, key, heldResourceVersion, eventResourceVersion, eventType }`: a regressed event was rejected. */
  reflectorRegression: 'kube-informer:reflector:regression',
  /** `{ name, resourceVersion, items }`: a list finished and was handed to the store. */
  reflectorList: 'kube-informer:reflector:list',
  /** `{ name, resourceVersion }`: a watch started. */
  reflectorWatchStart: 'kube-informer:reflector:watch-start',
  /** `{ name, reason }`: a watch ended. */
  reflectorWatchEnd: 'kube-informer:reflector:watch-end',
  /** `{ name, error }`: a handler failed. */
  informerHandlerError: 'kube-informer:informer:handler-error',
  /** `{ key, diff }`: the mutation detector found a changed cached object. */
  cacheMutation: 'kube-informer:mutation:detected',
  /** `{ name, event, ... }`: work-queue metrics events (add, get, done, retry). */
  workqueue: 'kube-informer:workqueue',
  /** `{ name, event, identity, leader }`: leader-election transitions. */
  leaderElection: 'kube-informer:leaderelection',
} as const;

/** The channels themselves, ready to `publish` on (check `hasSubscribers` first on hot paths). */
export const channels = Object.fromEntries(
  Object.entries(channelNames).map(([k, v]) => [k, diagnosticsChannel.channel(v)]),
) as { readonly [K in keyof typeof channelNames]: diagnosticsChannel.Channel };

/** Publishes `message` on `channel` only when someone listens, so the hot path pays nothing otherwise. */
export function publish(channel: diagnosticsChannel.Channel, message: unknown): void {
  if (channel.hasSubscribers) channel.publish(message);
}
