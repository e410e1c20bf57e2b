// Pulling byte chunks out of a Node stream or any async iterable, stoppable at once, keeping what arrived.

import { Readable } from 'node:stream';
import { RingBuffer } from '../runtime/ring-buffer.js';

/** A chunk of a watch body. */
export type Chunk = Uint8Array | string;

/** Where the decoder pulls chunks from: `next()` like an async iterator, `close()` to stop at once. */
export interface ChunkSource {
  /** The next chunk; rejects with the source's error after every chunk that arrived before it. */
  next(): Promise<IteratorResult<Chunk>>;
  /**
   * `next()` without its promise: exactly one of `onChunk` (a chunk, or the end) and `onFailed` is
   * called once, with what `next()` would resolve or reject, never from inside this call. A Node stream
   * calls it from the stream's own event (its `data`, `end` or `error`), so a watch that delivers one
   * event per chunk pays no promise per chunk (bench/notes.md, issue 29, tenth session).
   */
  read(onChunk: (result: IteratorResult<Chunk>) => void, onFailed: (error: unknown) => void): void;
  /** Stops reading and destroys the underlying stream; a pending `next()` or `read()` ends done. */
  close(): void;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/** Who waits for the next chunk: a `next()` promise's settlers, or a `read()`'s callbacks (`direct`). */
interface Waiter {
  readonly resolve: (r: IteratorResult<Chunk>) => void;
  readonly reject: (e: unknown) => void;
  readonly direct: boolean;
}
/** Chunks buffered before the stream is paused (backpressure towards the socket). */
const HIGH_WATER_CHUNKS = 16;

function noop(): void {}

/**
 * Reads a Node `Readable` through its `data` events rather than its async iterator: chunks that
 * arrived before a connection reset are still handed out before the error (the async iterator drops
 * them once the stream is destroyed). Pauses the stream while {@link HIGH_WATER_CHUNKS} are queued.
 */
class StreamChunkSource implements ChunkSource {
  #stream: Readable;
  readonly #queue = new RingBuffer<Chunk>();
  #ended = false;
  #failed = false;
  #error: unknown;
  #closed = false;
  #waiter: Waiter | undefined;

  constructor(stream: Readable) {
    this.#stream = stream;
    stream.on('data', this.#onData);
    stream.on('end', this.#onEnd);
    stream.on('error', this.#onError);
    stream.on('close', this.#onClose);
  }

  next(): Promise<IteratorResult<Chunk>> {
    if (this.#queue.length > 0) {
      const value = this.#queue.shift() as Chunk;
      if (this.#queue.length === 0) {
        if (!this.#ended && !this.#failed && this.#stream.isPaused()) this.#stream.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#failed) return Promise.reject(this.#error);
    if (this.#ended || this.#closed) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject, direct: false };
    });
  }

  read(onChunk: (result: IteratorResult<Chunk>) => void, onFailed: (error: unknown) => void): void {
    // Anything next() can answer at once is answered through its promise: never from inside this call.
    if (this.#queue.length > 0 || this.#failed || this.#ended || this.#closed) {
      this.next().then(onChunk, onFailed);
      return;
    }
    this.#waiter = { resolve: onChunk, reject: onFailed, direct: true };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.clear();
    const stream = this.#stream;
    stream.off('data', this.#onData);
    stream.off('end', this.#onEnd);
    stream.off('close', this.#onClose);
    stream.off('error', this.#onError);
    // Errors of the destroy itself have nobody left to report to.
    stream.on('error', noop);
    stream.destroy();
    const waiter = this.#waiter;
    // A read()'s callback is not called from inside close() either (its caller may be the reader).
    if (waiter?.direct === true) {
      this.#waiter = undefined;
      queueMicrotask(() => waiter.resolve(DONE));
    } else this.#wake(undefined);
  }

  /** The end (`error` undefined) or a failure, told to the waiter: from the stream's own event. */
  #wake(error: unknown): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    if (error !== undefined) waiter.reject(error);
    else waiter.resolve(DONE);
  }

  #onData = (chunk: Chunk): void => {
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ value: chunk, done: false });
      return;
    }
    this.#queue.push(chunk);
    if (this.#queue.length >= HIGH_WATER_CHUNKS) this.#stream.pause();
  };

  #onEnd = (): void => {
    this.#ended = true;
    this.#wake(undefined);
  };

  #onError = (err: unknown): void => {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    this.#error = err;
    this.#wake(err);
  };

  #onClose = (): void => {
    if (this.#ended || this.#failed) return;
    const err = Object.assign(new Error('the stream closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    this.#onError(err);
  };
}

/** Any other async iterable: its iterator, and `destroy()` on the source when it has one. */
class IteratorChunkSource implements ChunkSource {
  #source: AsyncIterable<Chunk>;
  #iterator: AsyncIterator<Chunk>;
  #closed = false;

  constructor(source: AsyncIterable<Chunk>) {
    this.#source = source;
    this.#iterator = source[Symbol.asyncIterator]();
  }

  next(): Promise<IteratorResult<Chunk>> {
    return this.#closed ? Promise.resolve(DONE) : this.#iterator.next();
  }

  read(onChunk: (result: IteratorResult<Chunk>) => void, onFailed: (error: unknown) => void): void {
    this.next().then(onChunk, onFailed);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const destroy = (this.#source as { destroy?: unknown }).destroy;
    if (typeof destroy === 'function') destroy.call(this.#source);
    // A generator would queue this behind a pending read; it still finalizes the iterator eventually.
    this.#iterator.return?.().then(noop, noop);
  }
}

/** The right {@link ChunkSource} for `source`: event-driven for Node streams, the iterator otherwise. */
export function chunkSource(source: AsyncIterable<Chunk>): ChunkSource {
  return source instanceof Readable ? new StreamChunkSource(source) : new IteratorChunkSource(source);
}
