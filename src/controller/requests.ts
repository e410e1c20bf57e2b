// `controller.requests()`: the reconcile requests of the Controller's own scheduler as an async iterable,
// for users who drive their own loop — merging, priority and one run per key kept; each request finished.

import { AbortedError } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { ReconcileContext } from './context.js';
import { Action as Actions, type Action } from './scheduler.js';

/**
 * One reconcile of `key` handed to your loop by `controller.requests()`: the scheduler started it (the
 * key's requests merged, the highest priority first, never two runs of one key at once) and holds it as
 * running until you finish it — with {@link ReconcileRequest.done} (the {@link Action} a reconcile
 * function would return; default `Action.done()`) or {@link ReconcileRequest.fail} (the error a
 * reconcile would throw: the `onError` policy retries it, a `TerminalError` is not retried). Until then
 * the key is not started again, and the request counts toward the controller's `concurrency`.
 *
 * `ctx` is the reconcile context a reconcile function gets: `ctx.object`, `ctx.reason`, `ctx.priority`,
 * `ctx.client`, `ctx.signal` (aborted by the controller's stop and by `reconcileTimeoutMs`: the request
 * is then over, as a reconcile would be — finish it or not, the answer is ignored).
 */
export interface ReconcileRequest<T, M extends ResourceDescriptor<unknown> = never> {
  /** The key (`namespace/name`, or `name` for a cluster-scoped primary). */
  readonly key: string;
  /** The reconcile context (see {@link ReconcileContext}). */
  readonly ctx: ReconcileContext<T, M>;
  /** Ends the run with `action` (default `Action.done()`). False when the request was over already. */
  done(action?: Action): boolean;
  /** Ends the run as failed with `error` (the `onError` policy decides the retry). False when the request was over already. */
  fail(error: unknown): boolean;
}

type Pull<T> = { resolve: (r: IteratorResult<ReconcileRequest<T>>) => void; stream: RequestStream<T> };

class Request<T> implements ReconcileRequest<T> {
  readonly key: string;
  readonly ctx: ReconcileContext<T>;
  /** The stream that handed it out, while it is out. */
  owner: RequestStream<T> | undefined;
  #settle: ((outcome: { action: Action } | { error: unknown }) => void) | undefined;

  constructor(key: string, ctx: ReconcileContext<T>, settle: (outcome: { action: Action } | { error: unknown }) => void) {
    this.key = key;
    this.ctx = ctx;
    this.#settle = settle;
  }

  get over(): boolean {
    return this.#settle === undefined;
  }

  done(action: Action = Actions.done()): boolean {
    return this.finish({ action });
  }

  fail(error: unknown): boolean {
    return this.finish({ error });
  }

  finish(outcome: { action: Action } | { error: unknown }): boolean {
    const settle = this.#settle;
    if (settle === undefined) return false;
    this.#settle = undefined;
    this.owner?.forget(this);
    this.owner = undefined;
    settle(outcome);
    return true;
  }
}

/**
 * The bridge between a controller built without a reconcile function and the loops of
 * `controller.requests()`: its {@link RequestQueue.reconcile} is the controller's reconcile — each call
 * waits in line until a loop takes it and finishes it. @hidden
 */
export class RequestQueue<T> {
  readonly #waiting = new RingBuffer<Request<T>>();
  readonly #pulls = new RingBuffer<Pull<T>>();

  /** The controller's reconcile: a request that settles when the loop that took it finishes it. */
  readonly reconcile = (key: string, ctx: ReconcileContext<T>): Promise<Action> =>
    new Promise<Action>((resolve, reject) => {
      const signal = ctx.signal;
      const onAbort = (): void => void request.finish({ error: new AbortedError(`the reconcile request of ${key} ended: its signal was aborted`, { cause: signal.reason }) });
      const request = new Request<T>(key, ctx, (outcome) => {
        signal.removeEventListener('abort', onAbort);
        if ('action' in outcome) resolve(outcome.action);
        else reject(outcome.error);
      });
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#offer(request);
    });

  /** A request for the next loop that pulls (a loop that waits gets it at once). */
  #offer(request: Request<T>): void {
    if (request.over) return;
    for (let pull = this.#pulls.shift(); pull !== undefined; pull = this.#pulls.shift()) {
      if (pull.stream.closed) continue;
      request.owner = pull.stream;
      pull.stream.handedOut(request);
      pull.resolve({ value: request, done: false });
      return;
    }
    this.#waiting.push(request);
  }

  /** The next request for `stream`: at once when one waits, else once one comes. */
  take(stream: RequestStream<T>): Promise<IteratorResult<ReconcileRequest<T>>> {
    for (let request = this.#waiting.shift(); request !== undefined; request = this.#waiting.shift()) {
      if (request.over) continue; // its signal aborted while it waited
      request.owner = stream;
      stream.handedOut(request);
      return Promise.resolve({ value: request, done: false });
    }
    return new Promise((resolve) => this.#pulls.push({ resolve, stream }));
  }

  /** `stream` ended: its waiting pulls get `done`. */
  release(stream: RequestStream<T>): void {
    const kept: Array<Pull<T>> = [];
    for (let pull = this.#pulls.shift(); pull !== undefined; pull = this.#pulls.shift()) {
      if (pull.stream === stream) pull.resolve({ value: undefined, done: true });
      else kept.push(pull);
    }
    for (const pull of kept) this.#pulls.push(pull);
  }
}

/** One loop of `controller.requests()`. */
class RequestStream<T> implements AsyncIterableIterator<ReconcileRequest<T>> {
  readonly #queue: RequestQueue<T>;
  readonly #out = new Set<Request<T>>();
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => void this.return();
  closed = false;

  constructor(queue: RequestQueue<T>, signal: AbortSignal | undefined) {
    this.#queue = queue;
    this.#signal = signal;
    if (signal?.aborted === true) this.closed = true;
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ReconcileRequest<T>>> {
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return this.#queue.take(this);
  }

  /**
   * Ends the loop: its waiting `next()` calls get `done`, and every request it handed out and was not
   * finished is handed back — its key runs again at once, with its priority — rather than lost.
   */
  async return(): Promise<IteratorResult<ReconcileRequest<T>>> {
    if (!this.closed) {
      this.closed = true;
      this.#signal?.removeEventListener('abort', this.#onAbort);
      this.#queue.release(this);
      const out = [...this.#out];
      // A microtask later: when the loop ended because the controller's own signal aborted, the stop
      // reaches the requests first (their ctx.signal), and they end as stopped, not as handed back.
      await Promise.resolve();
      for (const request of out) request.finish({ action: Actions.requeueAfter(0, request.ctx.priority) });
    }
    return { value: undefined, done: true };
  }

  handedOut(request: Request<T>): void {
    this.#out.add(request);
  }

  forget(request: Request<T>): void {
    this.#out.delete(request);
  }
}

/**
 * The one implementation of `controller.requests(signal)`. Throws `INVALID_OPTION` for a controller built
 * with a reconcile function (`queue` undefined). @hidden
 */
export function requestStream<T>(queue: RequestQueue<T> | undefined, name: string, signal?: AbortSignal): AsyncIterableIterator<ReconcileRequest<T>> {
  if (queue === undefined) {
    throw new InvalidOptionError(
      `Controller ${name}: requests() hands out the reconciles of a controller built without a reconcile function (builder.build(options)); this one was built with one, which gets every request`,
    );
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`Controller ${name}: requests(signal): the signal must be an AbortSignal`);
  return new RequestStream<T>(queue, signal);
}
