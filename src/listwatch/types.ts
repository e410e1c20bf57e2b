// The ListerWatcher contract: how the reflector lists and watches, whatever the transport.

import type { GroupVersionResource } from '../core/types.js';

export type { GroupVersionResource };

/** Query options of a list or watch request; names and meanings are the Kubernetes API's. */
export interface ListOptions {
  /** `""` = most recent (quorum read); `"0"` = any (cache); otherwise see `resourceVersionMatch`. */
  resourceVersion?: string;
  /** How `resourceVersion` is matched on a list. */
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** Page size of a list; `0`/absent = unpaginated. */
  limit?: number;
  /** The continue token of the previous page. */
  continue?: string;
  /** Only objects whose labels match (`app=web,tier!=db`). */
  labelSelector?: string;
  /** Only objects whose fields match (`metadata.name=x,spec.nodeName=n1`). */
  fieldSelector?: string;
  /** Server-side watch timeout. */
  timeoutSeconds?: number;
  /** Ask the server for BOOKMARK events on a watch. */
  allowWatchBookmarks?: boolean;
  /** Streaming list: the watch first sends the current state as ADDED events, then a bookmark. */
  sendInitialEvents?: boolean;
}

/** A list answer: items plus the list's resource version and paging fields. */
export interface ObjectList<T> {
  /** The list's API version (`v1`, `apps/v1`). */
  apiVersion?: string;
  /** The list's kind (`PodList`). */
  kind?: string;
  /** The list's resource version and paging fields. */
  metadata: {
    /** The resource version the list was served at. */
    resourceVersion?: string;
    /** The token for the next page; absent or empty on the last page. */
    continue?: string;
    /** How many items remain after this page, when the server knows. */
    remainingItemCount?: number;
    /** The shard selector the server applied (Kubernetes 1.36+, gate `ShardedListAndWatch`), echoed back. */
    shardInfo?: {
      /** The selector, in the wire form the server formats it. */
      selector?: string;
    };
  };
  /** The objects of this page. */
  items: T[];
}

/** The event types of a Kubernetes watch stream. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One watch event. For `ERROR`, `object` is a `Status`; for `BOOKMARK`, only metadata is meaningful. */
export interface WatchEvent<T> {
  /** What happened. */
  type: WatchEventType;
  /** The object after the change (its last state, for DELETED); a Status for ERROR; metadata for BOOKMARK. */
  object: T;
}

/**
 * Lists and watches one resource. `list` resolves with one page (the reflector does the paging);
 * `watch` resolves once the stream is open, with an async iterable of its events that ends when the
 * server closes the stream and ends (or throws an abort error) when `signal` aborts.
 *
 * Errors: a rejection or a thrown iteration error whose `code` is `'EXPIRED'` or whose `statusCode` (or
 * `code`) is 410 means "the resource version is gone, relist". Use `ApiStatusError` for HTTP answers.
 */
export interface ListerWatcher<T> {
  /** Lists one page. */
  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>>;
  /** Opens a watch; resolves once the server accepted it. */
  watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>>;
  /**
   * Optional: names the Kubernetes API server this talks to — its URL, the user and the API group
   * version (`https://10.0.0.1:6443 admin /apis/apps/v1`) — so that what one request learnt of the
   * server is remembered for every ListerWatcher with the same identity. A reflector with
   * `useWatchList: 'auto'` (the default) streams its lists only when this is set (`newListWatch` sets
   * it), and learns once per identity whether the server supports streaming lists; without it, it
   * pages lists, as client-go does for a client that does not declare the streaming semantics.
   */
  readonly serverIdentity?: string;
}

/**
 * An optional fast path of the {@link ListerWatcher} contract: the iterator of a watch's iterable may
 * implement `iterator[READ_READY]()`, which hands out the next event already decoded from the last
 * chunk, synchronously, or `undefined` when none is (then `next()` waits for more); the reflector uses
 * it when it is there (`decodeWatchStream`'s iterators have it). Events come out in the same order
 * either way; a failure found in a chunk is still thrown by `next()` after the events before it. It
 * saves a promise per event for the ~20 events a network chunk usually holds.
 */
export const READ_READY: unique symbol = Symbol('kube-informer.readReady');

/**
 * Internal (not exported by the package): `iterator[SETTLED_BY]` is the signal whose abort settles a
 * pending `next()` at once (`decodeWatchStream` with a `signal`). A reflector that gave the watch that
 * very signal then reads without racing each read against it — one promise less per event.
 */
export const SETTLED_BY: unique symbol = Symbol('kube-informer.settledBy');

/**
 * Internal (not exported by the package): `iterator[READ_PUSHED](sink)` is `next()` for a reader that
 * takes most events synchronously. It resolves like `next()`, but each event decoded while it waits is
 * first offered to `sink`, inside the chunk's own callback: an event the sink takes (`true`) is gone,
 * and the read goes on waiting; the first one it refuses (`false`) is what the read resolves with, and
 * the events after it stay for `next()` or `READ_READY`. The sink is never called from inside
 * `iterator[READ_PUSHED]` itself (events already decoded resolve the read at once, as `next()` would),
 * so the reader's own call stack never re-enters it. The chunk's callback is, for a Node stream, the
 * stream's own `data` event (`ChunkSource.read`). A watch delivering one event per chunk — a real server
 * at a cluster's rates — then costs no promise between the socket and the store.
 */
export const READ_PUSHED: unique symbol = Symbol('kube-informer.readPushed');

/** An iterator that can hand out already-decoded events without a promise (see {@link READ_READY}). */
export interface ReadyIterator<T> extends AsyncIterator<WatchEvent<T>> {
  [READ_READY](): WatchEvent<T> | undefined;
  /** See {@link READ_PUSHED}. */
  [READ_PUSHED]?(sink: (event: WatchEvent<T>) => boolean): Promise<IteratorResult<WatchEvent<T>>>;
}
