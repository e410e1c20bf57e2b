// FakeControllerSource: an in-memory ListerWatcher, the port of client-go's tools/cache/testing fixture.

import { validateOptions } from '../core/options.js';
import { AbortedError, ApiStatusError } from '../core/errors.js';
import { isComparableResourceVersion } from '../core/resource-version.js';
import type { KubeObject } from '../core/types.js';
import type { ListerWatcher, ListOptions, ObjectList, WatchEvent } from '../listwatch/types.js';
import { EventStream } from './event-stream.js';
import {
  expiredError,
  ResourceState,
  statusError,
  tooLargeError,
  type StateChange,
  type StoredEntry,
} from './resource-state.js';
import { asLeft, entryMatcher, eventTypeFor } from './selectors.js';
import { decodeContinue, encodeContinue } from './state-paging.js';

/** Options of {@link FakeControllerSource}. */
export interface FakeControllerSourceOptions {
  /** How many changes are remembered for watch replay before older ones are forgotten (→ 410). Default 10 000. */
  historyLimit?: number;
  /** `apiVersion` put on list answers. Default: none. */
  apiVersion?: string;
  /** `kind` put on list answers (e.g. `PodList`). Default: none. */
  listKind?: string;
}

/** One call made to a {@link FakeControllerSource}, in the order they were made. */
export interface FakeSourceCall {
  /** `list` or `watch`. */
  verb: 'list' | 'watch';
  /** A copy of the options the caller passed. */
  options: ListOptions;
}

const RESOURCE = 'objects';

/**
 * An in-memory "API server" for one resource that implements {@link ListerWatcher}, like client-go's
 * `FakeControllerSource`. Every change bumps a global integer resourceVersion (1, 2, 3, ...) and
 * writes it into the stored object; `list()` returns copies at the current version; `watch()`
 * replays the changes after the asked version, then streams live ones.
 *
 * - `watch` with `""` or a non-integer version rejects (so a reflector relists, as with client-go's
 *   fake); with a version older than the remembered history it rejects with an `ApiStatusError`
 *   whose `statusCode` is 410; with a version newer than the current one it rejects with 504
 *   (`ResourceVersionTooLarge`).
 * - The `...DropWatch` variants record a change without sending it to open watches: a missed event,
 *   seen only on relist (or on a watch replay from before it).
 * - {@link openWatches} counts watches still open, so tests can assert that none leaked.
 *
 * Warning: objects passed in are copied; objects handed out are fresh copies. Mutating either has no
 * effect on the source.
 */
export class FakeControllerSource<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  /** When set, every `list()` rejects with this error until it is cleared (client-go's `ListError`). */
  listError: Error | undefined;
  /** When set, every `watch()` rejects with this error until it is cleared. */
  watchError: Error | undefined;

  #state: ResourceState;
  #options: FakeControllerSourceOptions;
  #open = new Set<EventStream<WatchEvent<unknown>>>(); // unknown, not T: keeps the class assignable across T
  #nextListErrors: Error[] = [];
  #nextWatchErrors: Error[] = [];
  #calls: FakeSourceCall[] = [];
  #shutdown = false;

  /** Throws `INVALID_OPTION` for an option of the wrong type or an unknown one. */
  constructor(options: FakeControllerSourceOptions = {}) {
    validateOptions('FakeControllerSource', options, { historyLimit: 'count', apiVersion: 'string', listKind: 'string' });
    this.#options = options;
    this.#state = new ResourceState({ historyLimit: options.historyLimit });
  }

  /** Adds an object and sends ADDED to open watches. Returns the stored copy (with uid and resourceVersion). */
  add(obj: T): T {
    return this.#out(this.#state.create(RESOURCE, obj));
  }

  /** Replaces an object and sends MODIFIED. Throws a 404 `ApiStatusError` when it does not exist. */
  modify(obj: T): T {
    return this.#out(this.#state.update(RESOURCE, obj));
  }

  /** Deletes an object (its final state is `obj`, with a new resourceVersion) and sends DELETED. */
  delete(obj: T): T {
    const { namespace, name } = nameOf(obj);
    return this.#out(this.#state.delete(RESOURCE, namespace, name, { finalState: obj }));
  }

  /** Like {@link add}, but open watches never see it. */
  addDropWatch(obj: T): T {
    return this.#out(this.#state.create(RESOURCE, obj, { broadcast: false }));
  }

  /** Like {@link modify}, but open watches never see it. */
  modifyDropWatch(obj: T): T {
    return this.#out(this.#state.update(RESOURCE, obj, { broadcast: false }));
  }

  /** Like {@link delete}, but open watches never see it. */
  deleteDropWatch(obj: T): T {
    const { namespace, name } = nameOf(obj);
    return this.#out(this.#state.delete(RESOURCE, namespace, name, { finalState: obj, broadcast: false }));
  }

  /** The current resourceVersion (`"0"` before the first change). */
  resourceVersion(): string {
    return String(this.#state.currentResourceVersion());
  }

  /** Copies of the current objects, in key order. */
  items(): T[] {
    return this.#state.entries(RESOURCE).map((e) => this.#out(e));
  }

  /** Makes only the next `list()` reject with `error` (queued: call again to fail several). */
  failNextList(error: Error): void {
    this.#nextListErrors.push(error);
  }

  /** Makes only the next `watch()` reject with `error` (queued). */
  failNextWatch(error: Error): void {
    this.#nextWatchErrors.push(error);
  }

  /** Every `list`/`watch` call so far, with a copy of its options. */
  calls(): FakeSourceCall[] {
    return this.#calls.map((c) => ({ verb: c.verb, options: { ...c.options } }));
  }

  /** How many watches are open (not yet ended, aborted or returned). */
  openWatches(): number {
    return this.#open.size;
  }

  /** Forgets the history up to `resourceVersion` (default: all of it); watching from before it → 410. */
  compact(resourceVersion?: string): void {
    this.#state.compact(resourceVersion === undefined ? undefined : Number(resourceVersion));
  }

  /** Ends every open watch and forgets the history: the next watch from an old version gets 410. */
  resetWatch(): void {
    for (const s of [...this.#open]) s.end();
    this.#state.forgetHistory(RESOURCE);
  }

  /** Ends every open watch for good: later `watch()` calls reject. `list()` keeps working. */
  shutdown(): void {
    this.#shutdown = true;
    for (const s of [...this.#open]) s.end();
  }

  /**
   * Sends an ERROR event carrying a `Status` to every open watch, then ends them (the API server always
   * closes a watch after an ERROR). A number is shorthand for a Status with that code (default 410 Expired).
   */
  sendError(status: number | Record<string, unknown> = 410): void {
    const body =
      typeof status === 'number'
        ? (statusError(status, status === 410 ? 'Expired' : 'InternalError', `injected error ${status}`).status as object)
        : status;
    for (const s of [...this.#open]) {
      s.push({ type: 'ERROR', object: structuredClone(body) });
      s.end();
    }
  }

  /**
   * One page of the current objects. Honours `limit`/`continue` (a continue token pins the list's
   * resourceVersion; 410 once it is compacted), `resourceVersionMatch: 'Exact'`, and label/field selectors.
   */
  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    this.#calls.push({ verb: 'list', options: { ...options } });
    if (signal.aborted) throw new AbortedError('list aborted');
    const injected = this.#nextListErrors.shift() ?? this.listError;
    if (injected !== undefined) throw injected;
    let atRv: number | undefined;
    let after: string | undefined;
    if (options.continue) {
      const pos = decodeContinue(options.continue);
      if (pos === undefined) throw statusError(400, 'BadRequest', 'invalid continue token');
      ({ rv: atRv, after } = pos);
    } else if (options.resourceVersionMatch === 'Exact') {
      atRv = this.#parseRv(options.resourceVersion);
    }
    const page = this.#state.page(RESOURCE, {
      atRv,
      after,
      limit: options.limit,
      filter: entryMatcher(options.labelSelector, options.fieldSelector),
    });
    const metadata: ObjectList<T>['metadata'] = { resourceVersion: String(page.rv) };
    if (page.nextAfter !== undefined) {
      metadata.continue = encodeContinue({ rv: page.rv, after: page.nextAfter });
      if (!options.labelSelector && !options.fieldSelector) metadata.remainingItemCount = page.remaining;
    }
    const list: ObjectList<T> = { metadata, items: page.entries.map((e) => this.#out(e)) };
    if (this.#options.apiVersion !== undefined) list.apiVersion = this.#options.apiVersion;
    if (this.#options.listKind !== undefined) list.kind = this.#options.listKind;
    return list;
  }

  /**
   * Opens a watch from `options.resourceVersion`: replays the remembered changes after it, then streams
   * live ones. Honours label/field selectors (objects entering or leaving the selection become ADDED or
   * DELETED). The iterable ends on `resetWatch`/`shutdown`/`sendError`, or at once when `signal` aborts.
   */
  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.#calls.push({ verb: 'watch', options: { ...options } });
    if (signal.aborted) throw new AbortedError('watch aborted');
    const injected = this.#nextWatchErrors.shift() ?? this.watchError;
    if (injected !== undefined) throw injected;
    if (this.#shutdown) throw statusError(503, 'ServiceUnavailable', 'the fake controller source is shut down');
    const rv = this.#parseRv(options.resourceVersion);
    const replay = this.#state.changesSince(RESOURCE, rv);
    if (replay === undefined) {
      throw expiredError(rv, this.#state.replayFloor(RESOURCE));
    }
    const matcher = entryMatcher(options.labelSelector, options.fieldSelector);
    let unsubscribe: () => void = () => {};
    const stream = new EventStream<WatchEvent<T>>(() => {
      unsubscribe();
      this.#open.delete(stream as EventStream<WatchEvent<unknown>>);
    }, signal);
    const deliver = (c: StateChange): void => {
      const type = eventTypeFor(c.type, c.entry, c.prev, matcher);
      // An object leaving the selection is sent as it last matched, at the new resourceVersion.
      const entry = type === 'DELETED' && c.type === 'MODIFIED' && c.prev !== undefined ? asLeft(c.prev, c.entry) : c.entry;
      if (type !== undefined) stream.push({ type, object: this.#out(entry) });
    };
    for (const c of replay) deliver(c);
    unsubscribe = this.#state.subscribe(RESOURCE, deliver);
    this.#open.add(stream as EventStream<WatchEvent<unknown>>);
    return stream;
  }

  #parseRv(text: string | undefined): number {
    const current = this.#state.currentResourceVersion();
    if (text === undefined || !isComparableResourceVersion(text)) {
      throw new ApiStatusError(400, `resource version is not an integer: ${JSON.stringify(text ?? '')}`, {
        reason: 'BadRequest',
      });
    }
    if (text.length > 15 || Number(text) > current) {
      throw tooLargeError(text, current);
    }
    return Number(text);
  }

  #out(entry: StoredEntry): T {
    return JSON.parse(entry.json) as T;
  }
}

function nameOf(obj: KubeObject): { namespace: string; name: string } {
  const ns = obj?.metadata?.namespace;
  return { namespace: typeof ns === 'string' ? ns : '', name: String(obj?.metadata?.name ?? '') };
}
