// newListWatch: a ListerWatcher for any resource, over the KubeConfig's cluster with Node's http/https.

import type http from 'node:http';
import { AbortedError, resolveLogger, type KubeObject, type Logger, type LoggerOption } from '../core/index.js';
import type { Clock } from '../core/clock.js';
import { validateGroupVersionResource, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { formatShardSelector, shardMatcher, shardSelector, type ShardSelector } from '../core/shard-selector.js';
import { channels, publish } from '../observability/channels.js';
import { decodeWatchStream, validateCoalesceMs } from './decoder.js';
import { DEFAULT_LARGE_LIST_THRESHOLD_BYTES, decodeListBody, previewOf } from './list-body.js';
import { ResponseDecodeError, statusErrorFromResponse } from './errors.js';
import { listQuery, resourcePath, watchQuery, type BaseSelectors } from './paths.js';
import { readBody, readBodyBytes, Transport, type KubeConfigLike } from './transport.js';
import type { GroupVersionResource, ListerWatcher, ListOptions, ObjectList, WatchEvent } from './types.js';

/** The rules of {@link ListOptions} (values are the caller's: the reflector's, or yours when you list by hand). */
const LIST_OPTION_SCHEMA = {
  resourceVersion: 'string',
  resourceVersionMatch: ['NotOlderThan', 'Exact'],
  limit: 'any',
  continue: 'string',
  labelSelector: 'string',
  fieldSelector: 'string',
  timeoutSeconds: 'any',
  allowWatchBookmarks: 'boolean',
  sendInitialEvents: 'boolean',
} as const satisfies OptionSchemaFor<ListOptions>;
/** The `Accept` header of a metadata-only list (client-go's metadata informer). */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** The `Accept` header of a metadata-only watch. */
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** Options of {@link newListWatch}. */
export interface NewListWatchOptions {
  /** Only this namespace. Default: all namespaces (and the only choice for cluster-scoped resources). */
  namespace?: string;
  /** A label selector sent with every request, ANDed with a per-call one. Default: none. */
  labelSelector?: string;
  /** A field selector sent with every request, ANDed with a per-call one. Default: none. */
  fieldSelector?: string;
  /**
   * Ask for `PartialObjectMetadata` (only `apiVersion`, `kind` and `metadata`) instead of full objects,
   * like client-go's metadata informer. Default `false`.
   */
  metadataOnly?: boolean;
  /** Reuse connections between requests (a keep-alive agent). Default `true`. */
  keepAlive?: boolean;
  /**
   * Send requests through this agent instead of one built from the KubeConfig's TLS settings; you
   * then own its TLS configuration and its lifetime. Default: none.
   */
  agent?: http.Agent;
  /** The `User-Agent` header. Default `'kube-informer'`. */
  userAgent?: string;
  /**
   * List bodies of at least this many bytes are decoded item by item rather than as one string, so a
   * list larger than V8's maximum string length (~512 MiB, e.g. a `resourceVersion=0` list of 100 000+
   * pods, which the watch cache answers whole) still decodes. Meant for tests, which lower it to
   * exercise that path with small bodies. Default: V8's maximum string length (~512 MiB), the first size
   * that cannot be one string.
   */
  largeListThresholdBytes?: number;
  /**
   * Only this shard of the collection: sent as `shardSelector` on every list and watch (Kubernetes
   * 1.36+, alpha feature gate `ShardedListAndWatch`; build it with `shardSelector`/`evenShard` from
   * `kube-informer/sharding`). Each list's `metadata.shardInfo` is checked (an echo of another selector
   * is refused). Until a list echoed it, lists and watch events are filtered on the client too, and the
   * first object outside the shard — proof that the server ignored the parameter — gives one warning
   * (see docs/sharding.md). kube-apiserver v1.37 filters custom resources without echoing: they are
   * filtered twice, quietly. Default: none.
   */
  shard?: ShardSelector;
  /** Where the one warning of a shard filtered on the client goes; `false` for none. Default `console`. */
  logger?: LoggerOption;
  /**
   * Gathers the reads of a busy watch into one for up to this many milliseconds: fewer wake-ups and
   * less CPU per event, for up to this much latency per event while events keep coming (an event after
   * a quiet spell is read at once, and no read is held while anyone waits on the informer's cache:
   * `awaitObserved`, `awaitDeleted`, `awaitResourceVersion`, `relist`, a controller's read-your-writes).
   * What it saves depends on the machine: on kube-apiserver with pods written at 350 per second, 20 took
   * 11 % off the informer's CPU per event in one full run and added 7 % in another, on a slower machine
   * (bench/notes.md, issue 29). See `decodeWatchStream`'s `coalesceMs` for the rule and
   * docs/operations.md ("Tuning CPU") for how to tell whether it pays. At most 1 000. Default `0`:
   * every read as it comes.
   */
  watchCoalesceMs?: number;
  /** The timer of `watchCoalesceMs`. Default: the real clock. */
  clock?: Clock;
}

/** The ListerWatcher {@link newListWatch} returns, plus its path and a way to close pooled sockets. */
export interface KubeListWatch<T> extends ListerWatcher<T> {
  /** The collection path requests go to, below the server's base path (see `resourcePath`). */
  readonly path: string;
  /**
   * Closes the idle pooled connections. Requests may still be sent afterwards (a new pool is made).
   * Idle pooled sockets never keep the process alive; call this to release them at once.
   */
  close(): void;
}

const MAX_ERROR_BODY_BYTES = 64 * 1024;

function isSuccess(res: http.IncomingMessage): boolean {
  const code = res.statusCode ?? 0;
  return code >= 200 && code < 300;
}

/**
 * Fills `apiVersion` and `kind` on list items that lack them (the server leaves them out of items):
 * the list's `apiVersion`, and its `kind` without the `List` suffix. Items are fresh from `JSON.parse`.
 */
function fillItemKinds(list: ObjectList<unknown>): void {
  const apiVersion = list.apiVersion;
  const kind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : undefined;
  if (apiVersion === undefined && kind === undefined) return;
  for (const item of list.items) {
    if (item === null || typeof item !== 'object') continue;
    const obj = item as KubeObject;
    if (obj.apiVersion === undefined && apiVersion !== undefined) obj.apiVersion = apiVersion;
    if (obj.kind === undefined && kind !== undefined) obj.kind = kind;
  }
}

class KubeConfigListWatch<T> implements KubeListWatch<T> {
  readonly path: string;
  readonly #kubeConfig: KubeConfigLike;
  readonly #groupVersion: string;
  #transport: Transport;
  #base: BaseSelectors;
  #listAccept: string;
  #watchAccept: string;
  #largeListThreshold: number;
  #shard: { readonly text: string; readonly matches: (obj: unknown) => boolean; readonly keep: (event: WatchEvent<unknown>) => boolean } | undefined;
  /** Whether the server applies the shard selector: unknown until a list says (then the client filters). */
  #serverShards: boolean | undefined;
  #logger: Logger;
  #coalesceMs: number;
  #clock: Clock | undefined;

  constructor(kubeConfig: KubeConfigLike, gvr: GroupVersionResource, options: NewListWatchOptions) {
    this.path = resourcePath(gvr, options.namespace);
    this.#kubeConfig = kubeConfig;
    this.#groupVersion = gvr.group === '' ? `/api/${gvr.version}` : `/apis/${gvr.group}/${gvr.version}`;
    this.#transport = new Transport(kubeConfig, {
      keepAlive: options.keepAlive,
      agent: options.agent,
      userAgent: options.userAgent,
    });
    this.#base = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
    this.#listAccept = options.metadataOnly === true ? METADATA_LIST_ACCEPT : 'application/json';
    this.#watchAccept = options.metadataOnly === true ? METADATA_WATCH_ACCEPT : 'application/json';
    this.#largeListThreshold = options.largeListThresholdBytes ?? DEFAULT_LARGE_LIST_THRESHOLD_BYTES;
    this.#logger = resolveLogger(options.logger);
    this.#coalesceMs = options.watchCoalesceMs ?? 0;
    this.#clock = options.clock;
    if (options.shard !== undefined) {
      const selector = shardSelector(options.shard.field, options.shard.ranges); // sorted and merged
      const matches = shardMatcher(selector);
      const text = formatShardSelector(selector);
      this.#base.shardSelector = text;
      // BOOKMARK and ERROR events carry no object of the collection. An object cannot leave its shard:
      // uid and namespace never change, so a kept ADDED is never followed by a dropped MODIFIED.
      // A dropped event is the server's object outside the shard: proof that it ignored the selector.
      const keep = (event: WatchEvent<unknown>): boolean => {
        if (event.type === 'BOOKMARK' || event.type === 'ERROR' || matches(event.object)) return true;
        this.#ignoredBy(`watch ${this.path}`);
        return false;
      };
      this.#shard = { text, matches, keep };
    }
  }

  close(): void {
    this.#transport.close();
  }

  /** The server URL, the user's name and the API group version; undefined when the KubeConfig names no server. */
  get serverIdentity(): string | undefined {
    try {
      const server = this.#kubeConfig.getCurrentCluster()?.server;
      if (typeof server !== 'string' || server === '') return undefined;
      return `${server} ${this.#kubeConfig.getCurrentUser()?.name ?? ''} ${this.#groupVersion}`;
    } catch {
      return undefined;
    }
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    validateOptions('ListerWatcher.list', options, LIST_OPTION_SCHEMA);
    const query = listQuery(options, this.#base);
    const target = query === '' ? this.path : `${this.path}?${query}`;
    const what = `list ${target}`;
    const { res, release } = await this.#transport.get(target, this.#listAccept, signal);
    try {
      if (!isSuccess(res)) {
        const body = await readBody(res, signal, what, MAX_ERROR_BODY_BYTES);
        throw statusErrorFromResponse(res, body, what);
      }
      let body: Buffer | undefined = await readBodyBytes(res, signal, what);
      const list = decodeListBody(body, what, this.#largeListThreshold) as Partial<ObjectList<T>> | null;
      const preview = previewOf(body, 0);
      body = undefined; // the parsed list is all that is kept
      // Go decodes `"items": null` (a nil slice) as an empty list; so do we.
      if (list !== null && typeof list === 'object' && list.items === null) list.items = [];
      if (list === null || typeof list !== 'object' || !Array.isArray(list.items)) {
        throw new ResponseDecodeError('not-a-list', `${what}: the response has no items array`, preview);
      }
      if (list.metadata === null || typeof list.metadata !== 'object') list.metadata = {};
      fillItemKinds(list as ObjectList<unknown>);
      if (this.#shard !== undefined) this.#checkShard(list as ObjectList<unknown>, what);
      return list as ObjectList<T>;
    } finally {
      release();
    }
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    validateOptions('ListerWatcher.watch', options, LIST_OPTION_SCHEMA);
    const target = `${this.path}?${watchQuery(options, this.#base)}`;
    const what = `watch ${target}`;
    const { res, release } = await this.#transport.get(target, this.#watchAccept, signal);
    if (!isSuccess(res)) {
      try {
        const body = await readBody(res, signal, what, MAX_ERROR_BODY_BYTES);
        throw statusErrorFromResponse(res, body, what);
      } finally {
        release();
      }
    }
    if (signal.aborted) {
      release();
      throw new AbortedError(`${what} was aborted while connecting`);
    }
    res.once('close', release);
    // Filtered here too until a list showed the server applies the shard (a streaming list has no list).
    const keep = this.#shard !== undefined && this.#serverShards !== true ? this.#shard.keep : undefined;
    return decodeWatchStream<T>(res, { signal, description: what, keep, coalesceMs: this.#coalesceMs, clock: this.#clock });
  }

  /**
   * A sharded list: the server echoed the selector (it filtered), echoed another one (refused: that
   * is not the shard asked for), or none. No echo is no proof: kube-apiserver v1.37 filters custom
   * resources without echoing (their lists are unstructured), so the items are filtered here and the
   * warning comes only when one of them is outside the shard — the server ignored the parameter.
   */
  #checkShard(list: ObjectList<unknown>, what: string): void {
    const shard = this.#shard!;
    const echoed = list.metadata.shardInfo?.selector;
    if (echoed === shard.text) {
      this.#serverShards = true;
      return;
    }
    if (echoed !== undefined) {
      throw new ResponseDecodeError('shard-mismatch', `${what}: the server applied another shard selector than the one sent (${shard.text})`, echoed);
    }
    const kept = list.items.filter(shard.matches);
    if (kept.length < list.items.length) this.#ignoredBy(what);
    list.items = kept;
  }

  /** The server sent an object outside the shard: it ignores the selector. Warns once. */
  #ignoredBy(what: string): void {
    if (this.#serverShards === false) return;
    this.#serverShards = false;
    this.#logger.warn(
      `${what}: the server sent objects outside the shard selector (feature gate ShardedListAndWatch off, or a server older than 1.36); ` +
        'filtering the shard on the client from now on: every object is still sent and decoded',
      { component: 'listwatch', path: this.path },
    );
    publish(channels.shardFallback, { path: this.path, selector: this.#shard!.text });
  }
}

/**
 * A {@link ListerWatcher} for any resource of the KubeConfig's current cluster: core
 * (`{group: '', version: 'v1', resource: 'pods'}`), named groups and CRDs, namespaced or across all
 * namespaces. TLS (CA, client certificate, `insecure-skip-tls-verify`, `tls-server-name`) and
 * credentials (token, basic auth, exec and auth-provider plugins, impersonation) come from the
 * KubeConfig's `applyToHTTPSOptions`, once per request so refreshed tokens are picked up.
 *
 * Objects are plain JSON as the server sent it; list items get `apiVersion` and `kind` filled in from
 * the list (`PodList` → `Pod`). `list` resolves one page; `watch` resolves once the server answered
 * 200, with the events of the stream (see `decodeWatchStream`). A list body is never turned into one
 * string past `largeListThresholdBytes` (V8's string limit, ~512 MiB): its items are decoded one by one, so an unpaginated
 * `resourceVersion=0` answer larger than V8's string limit (~512 MiB) still decodes.
 *
 * Errors: a non-2xx answer rejects with `ApiStatusError` (`statusCode`, Status `reason`/`message`,
 * `retryAfterSeconds`; code `EXPIRED` for 410); a failure below HTTP with `NetworkError` (code
 * `NETWORK`, `syscallCode`); an abort with `AbortedError` (code `ABORTED`); a KubeConfig that cannot
 * supply a server or credentials with `KubeConfigError` (code `KUBECONFIG`); a 2xx list body that is
 * not a list with `ResponseDecodeError`. During a watch, a bad line throws `WatchDecodeError`, a broken
 * connection `NetworkError`; an abort ends the iteration quietly.
 *
 * Throws at once, before any request: `INVALID_OPTION` for a malformed resource or option and
 * `INVALID_SELECTOR` for a label or field selector that does not parse (the server would answer 400
 * on every request).
 *
 * Recovery: every error leaves nothing open; the reflector retries with backoff. Warning: a plain
 * `http://` server needs `insecure-skip-tls-verify: true` in the KubeConfig (client-node's rule).
 */
export function newListWatch<T = KubeObject>(
  kubeConfig: KubeConfigLike,
  gvr: GroupVersionResource,
  options: NewListWatchOptions = {},
): KubeListWatch<T> {
  validateGroupVersionResource('newListWatch', gvr);
  validateOptions('newListWatch', options, {
    namespace: 'string',
    labelSelector: 'labelSelector',
    fieldSelector: 'fieldSelector',
    metadataOnly: 'boolean',
    keepAlive: 'boolean',
    agent: 'object',
    userAgent: 'string',
    largeListThresholdBytes: 'positiveCount',
    shard: 'shardSelector',
    logger: 'logger',
    watchCoalesceMs: 'duration',
    clock: 'clock',
  });
  validateCoalesceMs('newListWatch', 'watchCoalesceMs', options.watchCoalesceMs);
  return new KubeConfigListWatch<T>(kubeConfig, gvr, options);
}
