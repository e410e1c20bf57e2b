// The writes a reconcile recorded (by `ctx.client` or `ctx.wrote`) that the next reconcile of its key waits to see, and the sources whose caches see them.

import { setMaxListeners } from 'node:events';
import type { Clock } from '../core/clock.js';
import { splitMetaNamespaceKey } from '../core/keys.js';
import { AbortedError } from '../core/errors.js';
import { formatDuration, type Logger } from '../core/log.js';
import { InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { groupOf } from '../core/types.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import type { AddEventHandlerOptions } from '../informer/options.js';
import { misuse } from './outcomes.js';

/**
 * What the controller uses of an informer: a factory's `SharedIndexInformer`, or — for a sharded
 * controller — a `ShardedInformer` over the owned slots.
 */
export interface SourceInformer {
  readonly name: string;
  addEventHandler(handler: ResourceEventHandler<unknown>, options?: AddEventHandlerOptions): SharedInformerRegistration;
  removeEventHandler(registration: SharedInformerRegistration): void;
  getIndexer(): { getByKey(key: string): unknown; listKeys(): string[]; list(): unknown[]; byIndex(indexName: string, indexedValue: string): unknown[] };
  isStarted(): boolean;
  isStopped(): boolean;
  awaitObserved(written: unknown, signal?: AbortSignal): Promise<unknown>;
  awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<unknown>;
}

/** A resource the controller reads, with its informer. */
export interface Source {
  readonly resource: ResourceDescriptor<unknown>;
  readonly informer: SourceInformer;
}

interface WrittenMeta {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

/** A recorded write: the object answered (wait for its version), or a deletion (wait for the cache to see it). */
interface Write {
  readonly informer: SourceInformer;
  readonly obj: WrittenMeta;
  readonly deletion: boolean;
}

/** A `DeleteResult` or a `Status`, as `ctx.wrote` may be given them. */
interface DeleteAnswer {
  gone?: unknown;
  object?: WrittenMeta;
  status?: StatusLike;
}

interface StatusLike {
  kind?: unknown;
  status?: unknown;
  details?: { name?: string; group?: string; kind?: string; uid?: string };
}

/**
 * The writes each key's reconciles recorded (with `ctx.wrote`, or by `ctx.client`), kept until the
 * key's next reconcile has waited for the caches to observe them.
 */
export class ObservedWrites {
  readonly #owner: string;
  readonly #sources: readonly Source[];
  readonly #pending = new Map<string, Map<string, Write>>();
  /** Keys whose writes are being waited for outside a reconcile (see {@link ObservedWrites.settleLater}). */
  readonly #settling = new Map<string, Settling>();
  #waits: Set<AbortController> | undefined;
  #waitsSignal: AbortSignal | undefined;
  /** Told of each finished wait (the controller's tracing, when it traces): how many writes, how many not observed in time, how long. */
  observer: ((key: string, writes: number, missed: number, waitedMs: number) => void) | undefined;

  constructor(owner: string, sources: readonly Source[]) {
    this.#owner = owner;
    this.#sources = sources;
  }

  /** Keys with writes not yet waited for, or being waited for. */
  get size(): number {
    return this.#pending.size + this.#settling.size;
  }

  /**
   * True when a request to reconcile `key` is to wait for its writes instead of going to the scheduler:
   * a reconcile of it recorded writes not yet observed. The request is remembered, and made once they
   * are (see {@link ObservedWrites.settleLater}). Keys with no writes cost one map lookup.
   */
  hold(key: string): boolean {
    const settling = this.#settling.get(key);
    if (settling !== undefined) {
      settling.wanted = true;
      return true;
    }
    if (!this.#pending.has(key)) return false;
    // The reconcile that recorded them is still running: its end starts the wait (settleLater).
    this.#settling.set(key, { done: undefined, wanted: true });
    return true;
  }

  /**
   * Waits for `key`'s recorded writes in the background, after the reconcile that made them ended, so
   * that the wait holds no worker slot; once they are observed (or the wait gave up on them), calls
   * `reschedule(key)` when a request for the key was held meanwhile ({@link ObservedWrites.hold}).
   * Nothing when the key recorded no writes.
   */
  settleLater(key: string, signal: AbortSignal, timeoutMs: number, clock: Clock, logger: Logger, reschedule: (key: string) => void): void {
    if (!this.#pending.has(key)) return;
    const settling: Settling = this.#settling.get(key) ?? { done: undefined, wanted: false };
    this.#settling.set(key, settling);
    const done = this.#wait(key, signal, timeoutMs, clock, logger);
    settling.done = done;
    done.then(
      () => {
        if (this.#settling.get(key) !== settling) return;
        this.#settling.delete(key);
        if (settling.wanted && !signal.aborted) reschedule(key);
      },
      () => {
        if (this.#settling.get(key) === settling) this.#settling.delete(key);
      },
    );
  }

  /**
   * Records `result` as written by a reconcile of `key` (the newest write of one object wins): what the
   * API server answered a write with, a `DeleteResult`, or a delete's `Status`. Throws `INVALID_OPTION`
   * (a misuse) for anything else, or a resource the controller does not watch.
   */
  record(key: string, result: unknown): void {
    const answer = result as (WrittenMeta & DeleteAnswer & StatusLike) | null;
    if (answer !== null && typeof answer === 'object' && typeof answer.gone === 'boolean') {
      const object = answer.object;
      if (object !== undefined && answer.gone === false) return this.record(key, object);
      if (object !== undefined) return this.#deletion(key, this.#sourceOf(object, 'ctx.wrote'), object, true);
      return this.#deletedStatus(key, answer.status);
    }
    if (answer?.kind === 'Status') return this.#deletedStatus(key, answer);
    const obj = answer;
    const name = obj?.metadata?.name;
    const rv = obj?.metadata?.resourceVersion;
    if (typeof obj?.apiVersion !== 'string' || typeof obj.kind !== 'string' || typeof name !== 'string' || typeof rv !== 'string' || rv === '') {
      throw misuse(
        new InvalidOptionError(
          `${this.#owner}: ctx.wrote needs the object the API server answered (apiVersion, kind, metadata.name and metadata.resourceVersion), a DeleteResult or a delete's Status`,
        ),
      );
    }
    this.#add(key, this.#sourceOf(obj, 'ctx.wrote'), obj, false);
  }

  /**
   * Records the answer of a write to `resource` made by `ctx.client` (no error: a resource the
   * controller does not watch, or an answer without a resource version, is not recorded).
   */
  recordFor(key: string, resource: ResourceDescriptor<unknown>, result: unknown): void {
    const obj = result as WrittenMeta | null;
    const source = this.#sources.find((s) => s.resource === resource) ?? this.#sources.find((s) => s.resource.kind === resource.kind && s.resource.group === resource.group);
    const rv = obj?.metadata?.resourceVersion;
    if (source === undefined || typeof obj?.metadata?.name !== 'string' || typeof rv !== 'string' || rv === '') return;
    this.#add(key, source, obj, false);
  }

  /** Records a deletion of `resource`'s `namespace/name` (with its uid, when known) made by `ctx.client`; unwatched: not recorded. */
  recordDeletionFor(key: string, resource: ResourceDescriptor<unknown>, name: string, namespace: string | undefined, uid: string | undefined): void {
    const source = this.#sources.find((s) => s.resource === resource) ?? this.#sources.find((s) => s.resource.kind === resource.kind && s.resource.group === resource.group);
    if (source === undefined) return;
    this.#add(key, source, { metadata: { name, namespace: resource.namespaced ? namespace : undefined, uid } }, true);
  }

  #deletedStatus(key: string, status: StatusLike | undefined): void {
    const d = status?.details;
    if (status?.status === 'Failure') {
      throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got a Failure Status (${String((status as { reason?: unknown }).reason)}): nothing was written; pass what a successful write answered`));
    }
    if (typeof d?.name !== 'string' || typeof d.kind !== 'string') {
      throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got a delete's answer without details (name, kind); record deletes by writing through ctx.client`));
    }
    const group = d.group ?? '';
    // A DELETE's Status names the plural resource in details.kind (kube-apiserver); the kind is accepted too.
    const source = this.#sources.find((s) => s.resource.group === group && (s.resource.resource === d.kind || s.resource.kind === d.kind));
    if (source === undefined) throw this.#unwatched(`${d.kind} (group ${JSON.stringify(group)})`);
    let namespace: string | undefined;
    if (source.resource.namespaced) {
      // A Status names no namespace: the reconcile's own is the only one it can be recorded in.
      namespace = splitMetaNamespaceKey(key).namespace;
      if (namespace === '') {
        throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got the Status of a delete of ${d.kind} ${d.name}, which names no namespace, in a reconcile of a cluster-scoped key; write through ctx.client, which knows it`));
      }
    }
    this.#deletion(key, source, { metadata: { name: d.name, namespace, uid: d.uid } }, false);
  }

  #deletion(key: string, source: Source, obj: WrittenMeta, fromObject: boolean): void {
    const m = obj.metadata;
    if (typeof m?.name !== 'string') throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got a DeleteResult whose object has no metadata.name`));
    this.#add(key, source, fromObject ? { metadata: { name: m.name, namespace: m.namespace, uid: m.uid } } : obj, true);
  }

  #sourceOf(obj: WrittenMeta, what: string): Source {
    const group = typeof obj.apiVersion === 'string' ? groupOf(obj.apiVersion) : undefined;
    const source = this.#sources.find((s) => s.resource.kind === obj.kind && s.resource.group === group);
    if (source === undefined) throw this.#unwatched(`${String(obj.kind)} (${String(obj.apiVersion)})`, what);
    return source;
  }

  #unwatched(what: string, by = 'ctx.wrote'): Error {
    return misuse(new InvalidOptionError(`${this.#owner}: ${by} got a ${what}, which this controller does not watch; only writes to watched resources can be waited for`));
  }

  #add(key: string, source: Source, obj: WrittenMeta, deletion: boolean): void {
    let writes = this.#pending.get(key);
    if (writes === undefined) {
      writes = new Map<string, Write>();
      this.#pending.set(key, writes);
    }
    const m = obj.metadata;
    writes.set(`${source.resource.group}/${source.resource.kind}/${m?.namespace ?? ''}/${m?.name ?? ''}`, { informer: source.informer, obj, deletion });
  }

  /**
   * Waits until every write recorded for `key` is observed by its cache, then forgets them. Gives up
   * on a write after `timeoutMs` with a warning (the reconcile then runs on the cache it has).
   * Rejects only when `signal` aborts.
   */
  async settle(key: string, signal: AbortSignal, timeoutMs: number, clock: Clock, logger: Logger): Promise<void> {
    const settling = this.#settling.get(key);
    if (settling?.done !== undefined) {
      // This reconcile runs after the wait: it answers a request held meanwhile, too.
      settling.wanted = false;
      await settling.done;
      return;
    }
    // A held request's reconcile runs now: nothing is left to reschedule.
    if (settling !== undefined) this.#settling.delete(key);
    await this.#wait(key, signal, timeoutMs, clock, logger);
  }

  async #wait(key: string, signal: AbortSignal, timeoutMs: number, clock: Clock, logger: Logger): Promise<void> {
    const writes = this.#pending.get(key);
    if (writes === undefined) return;
    this.#pending.delete(key);
    // One controller for the deadline and the caller's abort (AbortSignal.any costs more, per key); the
    // caller's signal gets one listener for every wait in flight (many keys wait at once: no
    // MaxListenersExceededWarning), and a wait for many writes may add a listener per write to its own.
    const deadline = new AbortController();
    setMaxListeners(0, deadline.signal);
    const timer = clock.setTimeout(() => deadline.abort(), timeoutMs);
    if (signal.aborted) deadline.abort(signal.reason);
    else this.#abortOn(signal).add(deadline);
    const wait = deadline.signal;
    const startedAt = clock.now();
    let missed = 0;
    try {
      await Promise.all(
        [...writes.values()].map(async ({ informer, obj, deletion }) => {
          try {
            await (deletion ? informer.awaitDeleted(obj, wait) : informer.awaitObserved(obj, wait));
          } catch (err) {
            if (signal.aborted) throw err;
            const ref = `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
            const what = deletion ? `deletion of ${informer.name} ${ref}` : `${obj.kind} ${ref} at resourceVersion ${obj.metadata?.resourceVersion}`;
            const why = deadline.signal.aborted && err instanceof AbortedError ? `not in the cache after ${formatDuration(timeoutMs)}` : String(err);
            missed++;
            logger.warn(`${this.#owner}: reconciling ${key} without waiting for its write of ${what} to be observed: ${why}`, { key, resource: deletion ? informer.name : obj.kind, error: why });
          }
        }),
      );
    } finally {
      clock.clearTimeout(timer);
      this.#waits?.delete(deadline);
    }
    this.observer?.(key, writes.size, missed, clock.now() - startedAt);
  }

  /** The waits in flight, all aborted by one listener on `signal` (the controller's run). */
  #abortOn(signal: AbortSignal): Set<AbortController> {
    if (this.#waits === undefined || this.#waitsSignal !== signal) {
      const waits = new Set<AbortController>();
      this.#waits = waits;
      this.#waitsSignal = signal;
      signal.addEventListener('abort', () => waits.forEach((w) => w.abort(signal.reason)), { once: true });
    }
    return this.#waits;
  }

  /** Forgets every recorded write (the controller stopped). */
  clear(): void {
    this.#pending.clear();
    this.#settling.clear();
  }
}

/** A key's writes waited for outside a reconcile: the wait (once started), and whether a request for the key came meanwhile. */
interface Settling {
  done: Promise<void> | undefined;
  wanted: boolean;
}
