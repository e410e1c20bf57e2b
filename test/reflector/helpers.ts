// Test helpers for the reflector: a scripted ListerWatcher, a controllable watch, a recording store.

import { compareResourceVersion, isComparableResourceVersion } from '../../src/core/resource-version.js';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { Reflector } from '../../src/reflector/reflector.js';
import type { RegressionInfo } from '../../src/reflector/errors.js';
import { ApiStatusError } from '../../src/core/errors.js';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import type { KubeObject } from '../../src/core/types.js';
import type { ListOptions, ListerWatcher, ObjectList, WatchEvent } from '../../src/listwatch/types.js';
import type { ReflectorErrorContext, ReflectorOptions, ReflectorStore } from '../../src/reflector/types.js';
import type { WatchedChange } from '../../src/reflector/watched-change.js';
export { seededRandom } from '../../src/testing/random.js';

/** A pod-like object. */
export interface Pod extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string>; uid?: string };
  spec?: Record<string, unknown>;
}

/** `pod('foo', '10')`. */
export function pod(name: string, rv?: string, extra: Partial<Pod> = {}): Pod {
  return { ...extra, metadata: { name, ...(rv === undefined ? {} : { resourceVersion: rv }) } };
}

/** A list answer. */
export function podList(rv: string, items: Pod[], cont?: string): ObjectList<Pod> {
  return { metadata: { resourceVersion: rv, ...(cont === undefined ? {} : { continue: cont }) }, items };
}

/** A bookmark event at `rv` (initial-events-end when `end`). */
export function bookmark(rv: string, end = false): WatchEvent<Pod> {
  return {
    type: 'BOOKMARK',
    object: { metadata: { name: '', resourceVersion: rv, ...(end ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) } },
  };
}

/** An ERROR event carrying a Status. */
export function statusEvent(code: number, reason: string, extra: Record<string, unknown> = {}): WatchEvent<Pod> {
  return { type: 'ERROR', object: { kind: 'Status', code, reason, message: `${reason} (${code})`, ...extra } as unknown as Pod };
}

/** A 410 Gone error as the transport throws it. */
export function gone(message = 'too old resource version'): ApiStatusError {
  return new ApiStatusError(410, message, { reason: 'Expired' });
}

/** A connection-refused error as Node's sockets raise it. */
export function connRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED', syscall: 'connect' });
}

/** Lets settled promise chains run. */
export const settle = (): Promise<void> => flushPromises(4);

type Step<T> = { kind: 'event'; event: WatchEvent<T> } | { kind: 'end' } | { kind: 'error'; error: unknown };

/** A watch stream the test drives: push events, close it, make it throw. Stops when its signal aborts. */
export class FakeWatch<T = Pod> implements AsyncIterable<WatchEvent<T>> {
  readonly #queue: Step<T>[] = [];
  #waiter: (() => void) | undefined;
  #stopped = false;
  /** Called with every event handed to the reader. */
  onDeliver: ((event: WatchEvent<T>) => void) | undefined;
  /** Options the watch was opened with (set by ScriptedLW). */
  options: ListOptions | undefined;
  /** Called once when the stream stops (reader aborted or returned, or it ended or failed). */
  onStop: (() => void) | undefined;

  /** True once the reader aborted or returned the iterator. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Queues one event (any shape, even a bad one). */
  push(...events: WatchEvent<T>[]): this {
    for (const event of events) this.#queue.push({ kind: 'event', event });
    this.#wake();
    return this;
  }

  /** Ends the stream normally after the queued events. */
  close(): this {
    this.#queue.push({ kind: 'end' });
    this.#wake();
    return this;
  }

  /** Makes the reader's next read throw `error` after the queued events. */
  fail(error: unknown): this {
    this.#queue.push({ kind: 'error', error });
    this.#wake();
    return this;
  }

  /** Stops the stream from the reader's side. */
  stop(): void {
    this.#markStopped();
    this.#wake();
  }

  #markStopped(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    const cb = this.onStop;
    this.onStop = undefined;
    cb?.();
  }

  attach(signal: AbortSignal): void {
    if (signal.aborted) this.stop();
    else signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    return {
      next: async () => {
        for (;;) {
          if (this.#stopped) return { done: true, value: undefined };
          const step = this.#queue.shift();
          if (step !== undefined) {
            if (step.kind === 'end') {
              this.#markStopped();
              return { done: true, value: undefined };
            }
            if (step.kind === 'error') {
              this.#markStopped();
              throw step.error;
            }
            this.onDeliver?.(step.event);
            return { done: false, value: step.event };
          }
          await new Promise<void>((resolve) => (this.#waiter = resolve));
        }
      },
      return: async () => {
        this.stop();
        return { done: true, value: undefined };
      },
    };
  }

  #wake(): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.();
  }
}

/** One request the reflector sent. `seenBefore` = newest comparable RV delivered to it before. */
export interface RecordedRequest {
  kind: 'list' | 'watch';
  options: ListOptions;
  seenBefore: string | undefined;
}

type Scripted<R> = R | Error | ((options: ListOptions) => R | Promise<R>);

/**
 * A ListerWatcher whose answers the test queues: `lists` and `watches` are consumed in order. An empty
 * `lists` queue makes a list hang until its signal aborts; an empty `watches` queue opens a silent watch.
 */
export class ScriptedLW<T extends KubeObject = Pod> implements ListerWatcher<T> {
  readonly requests: RecordedRequest[] = [];
  readonly lists: Scripted<ObjectList<T>>[] = [];
  readonly watches: Scripted<FakeWatch<T>>[] = [];
  readonly opened: FakeWatch<T>[] = [];
  /** Answers a list when `lists` is empty (otherwise the list hangs until aborted). */
  fallbackList: ((options: ListOptions) => ObjectList<T> | Promise<ObjectList<T>>) | undefined;
  /** Opens a watch when `watches` is empty (otherwise a silent watch opens). */
  fallbackWatch: ((options: ListOptions) => FakeWatch<T> | Promise<FakeWatch<T>>) | undefined;
  #newest: string | undefined;

  /** Notes an RV delivered to the reflector. */
  saw(rv: string | undefined): void {
    if (rv === undefined || !isComparableResourceVersion(rv)) return;
    if (this.#newest === undefined || compareResourceVersion(rv, this.#newest) > 0) this.#newest = rv;
  }

  listRequests(): ListOptions[] {
    return this.requests.filter((r) => r.kind === 'list').map((r) => r.options);
  }

  watchRequests(): ListOptions[] {
    return this.requests.filter((r) => r.kind === 'watch').map((r) => r.options);
  }

  /** The latest opened watch. */
  get current(): FakeWatch<T> {
    return this.opened[this.opened.length - 1];
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    this.requests.push({ kind: 'list', options: { ...options }, seenBefore: this.#newest });
    const script = this.lists.shift() ?? this.fallbackList;
    if (script === undefined) {
      return new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true });
      });
    }
    if (script instanceof Error) throw script;
    const answer = typeof script === 'function' ? await script(options) : script;
    this.saw(answer.metadata.resourceVersion);
    return answer;
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.requests.push({ kind: 'watch', options: { ...options }, seenBefore: this.#newest });
    const script = this.watches.shift() ?? this.fallbackWatch;
    if (script instanceof Error) throw script;
    const w = script === undefined ? new FakeWatch<T>() : typeof script === 'function' ? await script(options) : script;
    w.options = { ...options };
    const previous = w.onDeliver;
    w.onDeliver = (e) => {
      previous?.(e);
      // Only well-formed events count as seen: a rejected nameless object or unknown type is not a version.
      const meta = (e?.object as KubeObject | undefined)?.metadata;
      const wellFormed = e?.type === 'BOOKMARK' || (['ADDED', 'MODIFIED', 'DELETED'].includes(e?.type) && !!meta?.name);
      if (wellFormed) this.saw(meta?.resourceVersion);
    };
    w.attach(signal);
    this.opened.push(w);
    return w;
  }

  /**
   * Every request asked for a resource version not older than the newest one delivered before it;
   * `""` only right after a 410, `"0"` only before anything was seen. Returns the offending requests.
   */
  backwardRequests(): RecordedRequest[] {
    return this.requests.filter((r) => {
      const rv = r.options.resourceVersion;
      if (r.seenBefore === undefined || rv === undefined || rv === '') return false;
      if (!isComparableResourceVersion(rv)) return false;
      return compareResourceVersion(rv, r.seenBefore) < 0;
    });
  }
}

/** A store that keeps objects by key and records every call. */
export class RecordingStore<T extends KubeObject = Pod> implements ReflectorStore<T> {
  readonly items = new Map<string, T>();
  readonly ops: string[] = [];
  readonly rvUpdates: string[] = [];
  resyncs = 0;
  /** Make the next call of this method throw. */
  failNext: Partial<Record<'add' | 'update' | 'delete' | 'replace' | 'resync' | 'resourceVersion', Error>> = {};

  #check(op: 'add' | 'update' | 'delete' | 'replace' | 'resync' | 'resourceVersion'): void {
    const err = this.failNext[op];
    if (err !== undefined) {
      delete this.failNext[op];
      throw err;
    }
  }

  add(obj: T): void {
    this.#check('add');
    this.items.set(metaNamespaceKeyFunc(obj), obj);
    this.ops.push(`add ${metaNamespaceKeyFunc(obj)}@${obj.metadata?.resourceVersion}`);
  }
  update(obj: T): void {
    this.#check('update');
    this.items.set(metaNamespaceKeyFunc(obj), obj);
    this.ops.push(`update ${metaNamespaceKeyFunc(obj)}@${obj.metadata?.resourceVersion}`);
  }
  delete(obj: T): void {
    this.#check('delete');
    this.items.delete(metaNamespaceKeyFunc(obj));
    this.ops.push(`delete ${metaNamespaceKeyFunc(obj)}@${obj.metadata?.resourceVersion}`);
  }
  replace(items: T[], rv: string): void {
    this.#check('replace');
    this.items.clear();
    for (const i of items) this.items.set(metaNamespaceKeyFunc(i), i);
    this.ops.push(`replace@${rv} [${items.map((i) => metaNamespaceKeyFunc(i)).join(',')}]`);
  }
  resync(): void {
    this.#check('resync');
    this.resyncs++;
  }
  updateResourceVersion(rv: string): void {
    this.#check('resourceVersion');
    this.rvUpdates.push(rv);
  }
  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }
  /** `{ key: rv }` sorted by key. */
  snapshot(): Record<string, string | undefined> {
    return Object.fromEntries([...this.items.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v.metadata?.resourceVersion]));
  }
}


/** Everything a reflector test drives. */
export interface Harness {
  clock: FakeClock;
  lw: ScriptedLW<Pod>;
  store: RecordingStore<Pod>;
  reflector: Reflector<Pod>;
  controller: AbortController;
  errors: Array<{ error: Error; context: ReflectorErrorContext }>;
  regressions: RegressionInfo[];
  /** Starts `run()`; the promise is kept in `running`. */
  start(): Promise<void>;
  running: Promise<void> | undefined;
  /** Aborts, awaits `run()`, and checks nothing is left behind (no timer, no open watch). */
  stop(): Promise<void>;
  /** Error codes reported so far, in order. */
  codes(): string[];
}

/** A reflector over a scripted LW and a recording store on a FakeClock; `random` defaults to `() => 0`. */
export function harness(options: ReflectorOptions<Pod> = {}): Harness {
  const clock = new FakeClock();
  const lw = new ScriptedLW<Pod>();
  const store = new RecordingStore<Pod>();
  const errors: Harness['errors'] = [];
  const regressions: RegressionInfo[] = [];
  const controller = new AbortController();
  const reflector = new Reflector<Pod>(lw, store, {
    clock,
    random: () => 0,
    name: 'test',
    onError: (error, context) => errors.push({ error, context }),
    onRegression: (info) => regressions.push(info),
    ...options,
  });
  const h: Harness = {
    clock, lw, store, reflector, controller, errors, regressions, running: undefined,
    start() {
      h.running = reflector.run(controller.signal);
      return h.running;
    },
    async stop() {
      controller.abort();
      await h.running;
      await settle();
      if (clock.pendingTimers() !== 0) throw new Error(`timers left behind: ${clock.pendingDelays().join(',')}`);
      const open = lw.opened.filter((w) => !w.stopped);
      if (open.length !== 0) throw new Error(`${open.length} watch(es) left open`);
    },
    codes: () => errors.map((e) => String((e.error as { code?: unknown }).code ?? e.error.name)),
  };
  return h;
}

/**
 * Wraps a real ListerWatcher (e.g. `newListWatch`) and records every request like {@link ScriptedLW}:
 * options plus the newest version delivered before it, so `backwardRequests()` can check the guard.
 * `beforeList` runs before each list is forwarded (to inject server-side changes between pages).
 */
export class RecordingLW<T extends KubeObject = Pod> implements ListerWatcher<T> {
  readonly requests: RecordedRequest[] = [];
  beforeList: ((options: ListOptions) => void) | undefined;
  #newest: string | undefined;
  readonly #inner: ListerWatcher<T>;

  constructor(inner: ListerWatcher<T>) {
    this.#inner = inner;
  }

  #saw(rv: string | undefined): void {
    if (rv === undefined || !isComparableResourceVersion(rv)) return;
    if (this.#newest === undefined || compareResourceVersion(rv, this.#newest) > 0) this.#newest = rv;
  }

  listRequests(): ListOptions[] {
    return this.requests.filter((r) => r.kind === 'list').map((r) => r.options);
  }

  watchRequests(): ListOptions[] {
    return this.requests.filter((r) => r.kind === 'watch').map((r) => r.options);
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    this.requests.push({ kind: 'list', options: { ...options }, seenBefore: this.#newest });
    this.beforeList?.(options);
    const answer = await this.#inner.list(options, signal);
    this.#saw(answer.metadata.resourceVersion);
    return answer;
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.requests.push({ kind: 'watch', options: { ...options }, seenBefore: this.#newest });
    const inner = await this.#inner.watch(options, signal);
    const saw = (e: WatchEvent<T>): void => {
      const meta = (e.object as KubeObject | undefined)?.metadata;
      if (e.type === 'BOOKMARK' || ((e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') && meta?.name)) this.#saw(meta?.resourceVersion);
    };
    return {
      [Symbol.asyncIterator]: () => {
        const it = inner[Symbol.asyncIterator]();
        return {
          next: async () => {
            const r = await it.next();
            if (!r.done) saw(r.value);
            return r;
          },
          return: async () => (it.return ? it.return() : { done: true, value: undefined }),
        };
      },
    };
  }

  /** Requests that asked for a version older than one already delivered (see ScriptedLW). */
  backwardRequests(): RecordedRequest[] {
    return this.requests.filter((r) => {
      const rv = r.options.resourceVersion;
      if (r.seenBefore === undefined || rv === undefined || rv === '' || !isComparableResourceVersion(rv)) return false;
      return compareResourceVersion(rv, r.seenBefore) < 0;
    });
  }
}

/** Waits (polling real time, for real I/O) until `cond()` holds; throws after `timeoutMs`. */
export async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A watched change (the reflector's short path) as the transition `step()` would give for it: the next
 * state, the two store operations and the `event` report — what the short-path tests compare.
 */
export function asTransition<T>(change: WatchedChange<T>): { state: unknown; ops: unknown[]; reports: unknown[] } {
  return {
    state: change.state,
    ops: [{ kind: change.op, object: change.object }, { kind: 'resourceVersion', resourceVersion: change.resourceVersion }],
    reports: [{ kind: 'event', payload: { type: change.type, key: change.key, resourceVersion: change.resourceVersion, outcome: 'applied' } }],
  };
}
