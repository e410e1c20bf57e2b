// Pulling byte chunks out of a Node stream or any async iterable, stoppable at once, keeping what arrived.

import { Readable } from 'node:stream';
import type { Clock, ClockTimer } from '../core/clock.js';
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
  /**
   * Stops reading the connection for `ms` on `clock`, from the end of the current turn of the event
   * loop (what the socket holds now is read first), so what arrives meanwhile is read in one go
   * (see `DecodeWatchStreamOptions.coalesceMs`). Ignored while a hold is on, after `close()`, after a
   * turn that read {@link HOLD_SKIP_BYTES} or more since the last hold (the reads are large already),
   * and by a source with no socket: only a Node HTTP response has one.
   */
  hold?(ms: number, clock: Clock): void;
  /** Ends the hold in progress, if any: the connection is read again at once. */
  release?(): void;
}

/**
 * What one hold-to-hold stretch may read and still be held: a connection that delivers this much between
 * two holds is busy enough that its reads are large already, and holding it would only cap its rate.
 */
export const HOLD_SKIP_BYTES = 256 * 1024;

/** The part of a socket a hold uses. */
interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

/** A hold in progress: waiting for its turn to end (`immediate`), then paused until its `timer`. */
interface Hold {
  readonly socket: Pausable;
  readonly clock: Clock;
  immediate: ReturnType<typeof setImmediate> | undefined;
  timer: ClockTimer | undefined;
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
  /** The hold in progress (see {@link ChunkSource.hold}): waiting for its turn to end, or paused until its timer. */
  #hold: Hold | undefined;
  /** Bytes read since the last hold began (see {@link HOLD_SKIP_BYTES}). */
  #readSinceHold = 0;

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

  hold(ms: number, clock: Clock): void {
    if (this.#closed || this.#hold !== undefined) return;
    const socket = (this.#stream as { socket?: Partial<Pausable> | null }).socket;
    if (typeof socket?.pause !== 'function' || typeof socket.resume !== 'function') return;
    const hold: Hold = { socket: socket as Pausable, clock, immediate: undefined, timer: undefined };
    this.#hold = hold;
    // After this turn: the reads the poll already made are handed out first, and the response's own
    // read-more (a process.nextTick, which resumes the socket) has run, so the pause holds.
    hold.immediate = setImmediate(() => {
      hold.immediate = undefined;
      const read = this.#readSinceHold;
      this.#readSinceHold = 0;
      // A response that ended has given its socket back to the pool: that socket is not ours to pause.
      if (this.#closed || this.#ended || this.#failed || read >= HOLD_SKIP_BYTES) {
        this.#hold = undefined;
        return;
      }
      hold.socket.pause();
      hold.timer = clock.setTimeout(this.#release, ms);
    });
  }

  release(): void {
    this.#dropHold(true);
  }

  /** The hold's time is up: the socket reads again (what it gathered comes in one go). */
  readonly #release = (): void => {
    const hold = this.#hold;
    if (hold === undefined) return;
    this.#hold = undefined;
    if (!this.#closed) hold.socket.resume();
  };

  /**
   * Ends a hold early. A socket already paused is resumed when `resume` (a wait began, or the response
   * ended or failed: its socket may go back to the pool); not when the stream is being destroyed with it.
   */
  #dropHold(resume: boolean): void {
    const hold = this.#hold;
    if (hold === undefined) return;
    this.#hold = undefined;
    if (hold.immediate !== undefined) clearImmediate(hold.immediate);
    if (hold.timer !== undefined) {
      hold.clock.clearTimeout(hold.timer);
      if (resume) hold.socket.resume();
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dropHold(false);
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
    this.#readSinceHold += chunk.length;
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
    this.#dropHold(true);
    this.#wake(undefined);
  };

  #onError = (err: unknown): void => {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    this.#dropHold(true);
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
