// The streaming watch decoder: newline-delimited JSON chunks in, validated WatchEvents out.

import { StringDecoder } from 'node:string_decoder';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import { KubeInformerError } from '../core/index.js';
import { chunkSource, type Chunk, type ChunkSource } from './chunk-source.js';
import { WatchDecodeError, toNetworkError } from './errors.js';
import { WATCH_HURRY, type Hurry } from './hurry.js';
import { READ_PUSHED, READ_READY, SETTLED_BY, type ReadyIterator, type WatchEvent } from './types.js';

/** Options of {@link decodeWatchStream}. */
export interface DecodeWatchStreamOptions {
  /**
   * When it aborts, the iterator ends quietly (no error) and the source is destroyed. Default: none
   * (only `return()`, a decode error or the end of the source stops it).
   */
  signal?: AbortSignal;
  /** Names the stream in error messages. Default `'watch stream'`. */
  description?: string;
  /**
   * Events for which it returns false are dropped as they are decoded (`newListWatch` filters a
   * shard this way when the server did not). Default: every event is kept.
   */
  keep?: (event: WatchEvent<unknown>) => boolean;
  /**
   * Gathers the reads of a busy watch: when a read completes more than one event, or one event within
   * this many milliseconds of the previous one, the connection is not read again for this long, so the
   * events that arrive meanwhile come in one read and are decoded and handled together — one wake-up of
   * the process, one pass through the code, for several events. An event after a quiet spell is read at
   * once; while events keep coming, each waits up to this long. Only an HTTP response's socket can be
   * held (any other source reads as usual), and a stretch that read 256 KiB or more is not held: its
   * reads are large already. At most 1 000.
   *
   * Measured on kube-apiserver with pods written at 350 per second: 20 ms took 11 % off the informer's CPU
   * per event in one full run, and added 7 % in another (bench/notes.md, issue 29). Default `0`: every
   * read as it comes.
   *
   * Warning: the added wait is latency for whoever waits on an event under a steady stream of events.
   * An informer tells the watches `newListWatch` opens for it when anyone waits on its cache
   * (`awaitObserved` and the like), and they hold nothing meanwhile; a stream decoded here for your own
   * reader has no such informer.
   */
  coalesceMs?: number;
  /** The timer of {@link DecodeWatchStreamOptions.coalesceMs}'s holds. Default: the real clock. */
  clock?: Clock;
}

/** The longest {@link DecodeWatchStreamOptions.coalesceMs}: a hold must stay far below a watch's stall limit. */
export const MAX_COALESCE_MS = 1000;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/** The read in flight of a {@link READ_PUSHED} reader: who takes events at once, and how the read settles. */
interface PushedRead<T> {
  readonly sink: (event: WatchEvent<T>) => boolean;
  readonly resolve: (result: IteratorResult<WatchEvent<T>>) => void;
  readonly reject: (error: unknown) => void;
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

/**
 * Parses one line into a watch event or throws {@link WatchDecodeError}. Returns `undefined` for a
 * blank line. The parsed object itself is the event (no copy).
 */
function parseEventLine<T>(text: string, what: string): WatchEvent<T> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (isBlank(text)) return undefined;
    throw new WatchDecodeError('malformed-json', `${what}: a line is not JSON`, text, { cause: err });
  }
  if (value === null || typeof value !== 'object') {
    throw new WatchDecodeError('not-an-event', `${what}: a line is not a watch event`, text);
  }
  const { type, object } = value as { type?: unknown; object?: unknown };
  if (typeof type !== 'string' || object === null || typeof object !== 'object' || Array.isArray(object)) {
    throw new WatchDecodeError(
      'not-an-event',
      `${what}: a line is not a watch event (needs a string "type" and an object "object")`,
      text,
    );
  }
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
    case 'BOOKMARK':
    case 'ERROR':
      return value as WatchEvent<T>;
    default:
      throw new WatchDecodeError('unknown-type', `${what}: unknown watch event type ${JSON.stringify(type)}`, text);
  }
}

/**
 * The iterator behind {@link decodeWatchStream}. It decodes a whole chunk at a time into a small
 * array of events and hands them out one by one, so the per-event cost is one `JSON.parse` and one
 * resolved promise. Each chunk becomes text once (a `StringDecoder` keeps a character cut between
 * chunks whole) and lines are cut from that text; a line split across chunks is joined as a rope
 * (`+`), which `JSON.parse` flattens once — what the raw loop does, and no per-line buffer copy:
 * kube-apiserver over TLS delivers each event of a pod in two reads (its 4 KiB write buffer).
 */
class WatchEventIterator<T> implements AsyncIterableIterator<WatchEvent<T>>, ReadyIterator<T> {
  #chunks: ChunkSource;
  #signal: AbortSignal | undefined;
  #what: string;
  #keep: ((event: WatchEvent<unknown>) => boolean) | undefined;
  #ready: Array<WatchEvent<T>> = [];
  #readyIndex = 0;
  /** The text of a line not yet ended by `\n` (a rope of the chunks it spans). */
  #partial = '';
  #utf8 = new StringDecoder('utf8');
  #failure: Error | undefined;
  #finished = false;
  #closed = false;
  #onAbort: (() => void) | undefined;
  /** The {@link READ_PUSHED} read in flight, if any. */
  #pushed: PushedRead<T> | undefined;
  /** See {@link DecodeWatchStreamOptions.coalesceMs}; 0 = off. */
  #coalesceMs: number;
  #clock: Clock;
  /** When the last read that completed an event was decoded (clock ms). */
  #lastEventsAt = -Infinity;
  /** The informer's waits (see {@link WATCH_HURRY}): while anyone waits, no read is held. */
  #hurry: Hurry | undefined;
  #unhurry: (() => void) | undefined;

  constructor(source: AsyncIterable<Chunk>, options: DecodeWatchStreamOptions) {
    this.#signal = options.signal;
    this.#what = options.description ?? 'watch stream';
    this.#keep = options.keep;
    this.#coalesceMs = options.coalesceMs ?? 0;
    this.#clock = options.clock ?? realClock;
    // Start reading at once: a Node stream then hands over chunks that arrive before a reset even
    // when the consumer has not asked for them yet (a destroyed stream drops what it buffered).
    this.#chunks = chunkSource(source);
    const signal = this.#signal;
    if (signal?.aborted === true) this.#close();
    else if (signal !== undefined) {
      this.#onAbort = () => this.#close();
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** An abort of the signal closes the source, which settles a pending `next()` as done. */
  get [SETTLED_BY](): AbortSignal | undefined {
    return this.#signal;
  }

  /** Takes the informer's waits: a hold in progress ends when a wait begins, and none starts during one. */
  [WATCH_HURRY](hurry: Hurry): void {
    if (this.#coalesceMs === 0 || this.#closed || this.#hurry !== undefined) return;
    this.#hurry = hurry;
    this.#unhurry = hurry.subscribe(this.#releaseHold);
  }

  readonly #releaseHold = (): void => this.#chunks.release?.();

  [READ_READY](): WatchEvent<T> | undefined {
    return this.#readyIndex < this.#ready.length ? this.#ready[this.#readyIndex++] : undefined;
  }

  /**
   * `next()` with a sink that takes events as chunks arrive (see {@link READ_PUSHED}). Events already
   * decoded, a failure or the end settle it as `next()` would, without calling the sink.
   */
  [READ_PUSHED](sink: (event: WatchEvent<T>) => boolean): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#readyIndex < this.#ready.length || this.#failure !== undefined || this.#finished || this.#stopped()) return this.next();
    return new Promise((resolve, reject) => {
      this.#pushed = { sink, resolve, reject };
      this.#chunks.read(this.#onPushedChunk, this.#onPushedChunkFailed);
    });
  }

  next(): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#readyIndex < this.#ready.length) {
      const value = this.#ready[this.#readyIndex++];
      return Promise.resolve({ value, done: false });
    }
    return this.#fill();
  }

  /** Stops early: destroys the source (releasing its socket) and ends the iteration. */
  return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.#close();
    return Promise.resolve(DONE);
  }

  /** The next chunk's first event (reading on past chunks that complete no line), the end, or the failure. */
  #fill(): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      this.#close();
      return Promise.reject(failure);
    }
    if (this.#finished || this.#stopped()) {
      this.#close();
      return Promise.resolve(DONE);
    }
    // No async function: one promise per chunk (the chunk's), and the handlers are allocated once.
    return this.#chunks.next().then(this.#onChunk, this.#onChunkFailed);
  }

  readonly #onChunk = (result: IteratorResult<Chunk>): IteratorResult<WatchEvent<T>> | Promise<IteratorResult<WatchEvent<T>>> => {
    if (this.#stopped()) {
      this.#close();
      return DONE;
    }
    this.#decodeChunk(result);
    if (this.#ready.length > 0) {
      this.#readyIndex = 1;
      return { value: this.#ready[0], done: false };
    }
    return this.#fill();
  };

  /**
   * A chunk for the pushed read: its events go to the sink in order until one is refused (the read's
   * result), the source ends or fails (after the events before it), or the iterator is closed (by the
   * sink's own doing, or an abort). Otherwise the next chunk is read (`ChunkSource.read`: for a Node
   * stream, no promise at all: this runs inside the stream's `data` event).
   */
  readonly #onPushedChunk = (result: IteratorResult<Chunk>): void => {
    const read = this.#pushed as PushedRead<T>;
    if (this.#stopped()) {
      this.#close();
      this.#settlePushed(DONE);
      return;
    }
    this.#decodeChunk(result);
    while (this.#readyIndex < this.#ready.length) {
      const value = this.#ready[this.#readyIndex++];
      let taken: boolean;
      try {
        taken = read.sink(value);
      } catch (error) {
        this.#pushed = undefined;
        read.reject(error);
        return;
      }
      if (!taken) {
        this.#settlePushed({ value, done: false });
        return;
      }
      if (this.#closed) {
        this.#settlePushed(DONE);
        return;
      }
    }
    if (this.#failure !== undefined || this.#finished || this.#stopped()) {
      // What next() would answer now: the failure (closing), or the end.
      this.#pushed = undefined;
      this.#fill().then(read.resolve, read.reject);
      return;
    }
    this.#chunks.read(this.#onPushedChunk, this.#onPushedChunkFailed);
  };

  readonly #onPushedChunkFailed = (err: unknown): void => {
    const read = this.#pushed as PushedRead<T>;
    this.#pushed = undefined;
    try {
      read.resolve(this.#onChunkFailed(err));
    } catch (error) {
      read.reject(error);
    }
  };

  #settlePushed(result: IteratorResult<WatchEvent<T>>): void {
    const read = this.#pushed as PushedRead<T>;
    this.#pushed = undefined;
    read.resolve(result);
  }

  /** Replaces `#ready` with the events of what a chunk read brought: a chunk's lines, or the source's last line. */
  #decodeChunk(result: IteratorResult<Chunk>): void {
    // A fresh array, not `length = 0`: setting an array's length is a runtime call (0.9 µs per event with
    // one event per chunk, measured on kube-apiserver), an empty literal an inline allocation.
    if (this.#ready.length !== 0) this.#ready = [];
    this.#readyIndex = 0;
    if (result.done === true) {
      this.#finished = true;
      this.#decodeTail();
      return;
    }
    const raw = result.value;
    // A string chunk ends any character the bytes before it left cut (as U+FFFD, as a byte join would).
    this.#decodeText(typeof raw === 'string' ? this.#utf8.end() + raw : this.#utf8.write(Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)));
    if (this.#coalesceMs > 0 && this.#ready.length > 0) this.#gather();
  }

  /** A read completed events: when the watch is busy, the source holds its next read (see `coalesceMs`). */
  #gather(): void {
    const now = this.#clock.now();
    const busy = this.#ready.length > 1 || now - this.#lastEventsAt < this.#coalesceMs;
    this.#lastEventsAt = now;
    if (busy && this.#hurry?.urgent !== true) this.#chunks.hold?.(this.#coalesceMs, this.#clock);
  }

  readonly #onChunkFailed = (err: unknown): IteratorResult<WatchEvent<T>> => {
    const stopped = this.#stopped();
    this.#close();
    if (stopped) return DONE;
    throw err instanceof KubeInformerError ? err : toNetworkError(err, `${this.#what}: reading failed`);
  };

  /** True once `return()` was called or the signal aborted: read failures then mean "stopped". */
  #stopped(): boolean {
    return this.#closed || this.#signal?.aborted === true;
  }

  #decodeText(chunk: string): void {
    let nl = chunk.indexOf('\n');
    if (nl === -1) {
      this.#partial += chunk;
      return;
    }
    let start = 0;
    try {
      while (nl !== -1) {
        let text = chunk.slice(start, nl);
        if (this.#partial.length > 0) {
          text = this.#partial + text;
          this.#partial = '';
        }
        start = nl + 1;
        if (text.length > 0) {
          const event = parseEventLine<T>(text, this.#what);
          if (event !== undefined && (this.#keep === undefined || this.#keep(event))) this.#ready.push(event);
        }
        nl = chunk.indexOf('\n', start);
      }
    } catch (err) {
      this.#failure = err as Error;
      return;
    }
    if (start < chunk.length) this.#partial = chunk.slice(start);
  }

  /** The source ended: a complete last line without `\n` is accepted, a cut one is an error. */
  #decodeTail(): void {
    const text = this.#partial + this.#utf8.end();
    this.#partial = '';
    if (isBlank(text)) return;
    let event: WatchEvent<T> | undefined;
    try {
      event = parseEventLine<T>(text, this.#what);
    } catch (err) {
      const cause = err instanceof WatchDecodeError && err.failure === 'malformed-json' ? err.cause : err;
      this.#failure = new WatchDecodeError('truncated', `${this.#what}: the body ended in the middle of a line`, text, {
        cause,
      });
      return;
    }
    if (event !== undefined && (this.#keep === undefined || this.#keep(event))) this.#ready.push(event);
  }

  #close(): void {
    if (this.#onAbort !== undefined) {
      this.#signal?.removeEventListener('abort', this.#onAbort);
      this.#onAbort = undefined;
    }
    if (this.#closed) return;
    this.#closed = true;
    this.#finished = true;
    this.#unhurry?.();
    this.#unhurry = undefined;
    this.#ready = [];
    this.#readyIndex = 0;
    this.#partial = '';
    this.#chunks.close();
  }
}

/**
 * Decodes a Kubernetes watch body (one JSON event per line) from any byte source: an HTTP response,
 * a `Readable`, or an async iterable of `Buffer`/`Uint8Array`/`string` chunks. Events may be split at
 * any byte and many may share a chunk.
 *
 * The iterator yields each event as parsed (no copy; `ERROR` events pass through with their Status).
 * It throws {@link WatchDecodeError} (code `WATCH_DECODE`) after the last good event when a line is
 * not JSON, not an event (needs a string `type` and an object `object`), has an unknown type, or the
 * body ends in the middle of a line; a source that fails to read becomes a `NetworkError`.
 *
 * Stopping: `return()` (leaving a `for await` early) destroys the source when it has `destroy()`, even
 * while a read is pending; an abort of `options.signal` does the same and ends the iteration without
 * an error. After an error or the end, the source is destroyed too.
 */
export function decodeWatchStream<T = unknown>(
  source: AsyncIterable<Uint8Array | string>,
  options: DecodeWatchStreamOptions = {},
): AsyncIterableIterator<WatchEvent<T>> {
  validateOptions('decodeWatchStream', options, { signal: 'object', description: 'string', keep: 'function', coalesceMs: 'duration', clock: 'clock' });
  validateCoalesceMs('decodeWatchStream', 'coalesceMs', options.coalesceMs);
  return new WatchEventIterator<T>(source, options);
}

/** Refuses a read-coalescing window above {@link MAX_COALESCE_MS} (the rest of its rule is `duration`'s). */
export function validateCoalesceMs(owner: string, option: string, value: number | undefined): void {
  if (value !== undefined && value > MAX_COALESCE_MS) {
    throw new InvalidOptionError(`${owner}: option ${option} must be at most ${MAX_COALESCE_MS} ms (a hold must stay far below a watch's stall limit), got ${value}`);
  }
}
