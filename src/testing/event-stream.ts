// A single-consumer async iterable of watch events that ends on close or abort and leaves nothing behind.

import { RingBuffer } from '../runtime/ring-buffer.js';

/**
 * The async iterable a {@link FakeControllerSource} watch resolves with. Events pushed before the
 * consumer reads are buffered. `end()` lets the consumer drain what is buffered, then the iteration
 * finishes; aborting the watch's signal (or `break`ing out of `for await`) finishes it at once.
 * Either way the `onClose` callback runs exactly once, which is how the source unsubscribes.
 */
export class EventStream<T> implements AsyncIterable<T> {
  readonly #queue = new RingBuffer<T>();
  #waiter: ((r: IteratorResult<T>) => void) | undefined;
  #ended = false;
  #closed = false;
  #onClose: () => void;
  #signal: AbortSignal | undefined;
  #onAbort = (): void => this.#close(true);
  #iterating = false;

  /** `onClose` runs once when the stream finishes for any reason; `signal` aborting finishes it. */
  constructor(onClose: () => void, signal?: AbortSignal) {
    this.#onClose = onClose;
    this.#signal = signal;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** True once the stream has finished (ended and drained, aborted, or returned). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Queues an event for the consumer. Ignored after `end()` or close. */
  push(event: T): void {
    if (this.#ended || this.#closed) return;
    if (this.#waiter !== undefined) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w({ value: event, done: false });
      return;
    }
    this.#queue.push(event);
  }

  /** Ends the stream like a server closing it: buffered events are still delivered, then it finishes. */
  end(): void {
    if (this.#ended || this.#closed) return;
    this.#ended = true;
    if (this.#queue.length === 0) this.#close(false);
  }

  /** Finishes at once, dropping buffered events (what an abort does). */
  destroy(): void {
    this.#close(true);
  }

  #close(drop: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ended = true;
    if (drop) this.#queue.clear();
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#signal = undefined;
    const w = this.#waiter;
    this.#waiter = undefined;
    this.#onClose();
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#iterating) throw new Error('a watch stream can be iterated only once');
    this.#iterating = true;
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.#queue.length > 0) {
          const value = this.#queue.shift() as T;
          if (this.#ended && this.#queue.length === 0) this.#close(false);
          return Promise.resolve({ value, done: false });
        }
        if (this.#closed || this.#ended) {
          this.#close(false);
          return Promise.resolve({ value: undefined, done: true });
        }
        return new Promise((resolve) => {
          this.#waiter = resolve;
        });
      },
      return: (): Promise<IteratorResult<T>> => {
        this.#close(true);
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
