// The cache-mutation detector: keeps a deep copy of each object handed out and checks it was not changed.

import rfdc from 'rfdc';
import { type Clock, realClock, sleep } from '../core/clock.js';
import { AlreadyStartedError } from '../core/errors.js';
import { deepEqual } from '../core/json.js';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import { DeletedFinalStateUnknown } from '../core/keys.js';
import { channels, publish } from '../observability/channels.js';
import { CacheMutationError, DEFAULT_MAX_CHANGES, diffObjects } from './diff.js';

const clone = rfdc({ proto: false, circles: false });

/** The default `periodMs`: 1000 ms, client-go's period. */
const DEFAULT_MUTATION_PERIOD_MS = 1000;

/** Options of {@link CacheMutationDetector} and {@link newCacheMutationDetector}. */
export interface CacheMutationDetectorOptions {
  /** Names the cache in messages (e.g. the resource: `pods`). Default: `'cache'`. */
  name?: string;
  /** The clock periodic checks and expiry run on. Default: `realClock`. */
  clock?: Clock;
  /**
   * How often `run` compares every live object with its copy, in ms (client-go: 1 s); `run` also
   * compares once more when its signal aborts. Default: `1000`.
   */
  periodMs?: number;
  /**
   * How long copies are kept, in ms: objects are held in two rotating generations of this length,
   * so each is checked for between `retentionMs` and `2 × retentionMs` after it was added (client-go:
   * 2–4 minutes), which keeps memory bounded. Default: `120_000`.
   */
  retentionMs?: number;
  /**
   * Receives each mutation found. With it, `run` keeps running after a mutation; without it, `run`
   * rejects with the first {@link CacheMutationError}. Default: none.
   */
  onMutation?: (error: CacheMutationError) => void;
  /** How many changed fields one report lists at most. Default: `20`. */
  maxChanges?: number;
  /**
   * Only for {@link newCacheMutationDetector}: build a real detector (`true`) or a no-op (`false`).
   * Default: {@link cacheMutationDetectorEnabled}() — the `KUBE_CACHE_MUTATION_DETECTOR` variable.
   */
  enabled?: boolean;
}

const MUTATION_DETECTOR_OPTION_SCHEMA = {
  name: 'string',
  clock: 'clock',
  periodMs: 'positiveDuration',
  retentionMs: 'positiveDuration',
  onMutation: 'function',
  maxChanges: 'positiveCount',
  enabled: 'boolean',
} as const satisfies OptionSchemaFor<CacheMutationDetectorOptions>;

/** What an informer needs from a mutation detector; the real one and the no-op share it. */
export interface MutationDetector {
  /** False for the no-op detector. */
  readonly enabled: boolean;
  /** Starts watching `obj` (an object the cache just handed out) under `key`. */
  addObject(key: string, obj: unknown): void;
  /** Compares every watched object with its copy now; reports and returns what changed. */
  compareObjects(): CacheMutationError[];
  /**
   * Compares periodically until `signal` aborts, then once more; settles after that, leaving no timer
   * behind.
   */
  run(signal: AbortSignal): Promise<void>;
}

interface Entry {
  readonly key: string;
  readonly live: unknown;
  copy: unknown;
}

/**
 * Catches code that changes objects it got from the cache. Every object given to `addObject` is
 * deep-copied (rfdc) together with the live reference; `compareObjects` — run every `periodMs`
 * (default 1 s) by `run`, and once more when `run`'s signal aborts — deep-compares each live object
 * with its copy (`deepEqual`: own keys, whatever they are called; dates, maps, sets and byte arrays by
 * value) and reports a difference as a {@link CacheMutationError} naming the
 * key and the changed field paths, through `onMutation` and the `cacheMutation` diagnostics channel. A reported object's copy is refreshed, so one
 * mutation is reported once.
 *
 * Warning: a debugging aid with a cost — one deep copy per object handed out and a full comparison
 * per period, kept for 1–2 × `retentionMs`. For 10 000 pods of ~5 KB JSON, a comparison takes about
 * 200 ms of event-loop time — 20 % of a core at the default 1 s period — and the copies about 75 MiB
 * (`npx tsx bench/mutation.bench.ts`). Turn it on in tests and CI
 * (`KUBE_CACHE_MUTATION_DETECTOR=true`), not in production. Objects must be acyclic (JSON is).
 * It cannot tell who changed an object, only which and where.
 */
export class CacheMutationDetector implements MutationDetector {
  /** Always true for this class. */
  readonly enabled = true;
  #name: string;
  #clock: Clock;
  #periodMs: number;
  #retentionMs: number;
  #onMutation: ((error: CacheMutationError) => void) | undefined;
  #maxChanges: number;
  #current: Entry[] = [];
  #retained: Entry[] = [];
  #lastRotated: number;
  #running = false;

  /** Creates a detector; see {@link CacheMutationDetectorOptions} for the options and defaults. */
  constructor(options: CacheMutationDetectorOptions = {}) {
    validateOptions('CacheMutationDetector', options, MUTATION_DETECTOR_OPTION_SCHEMA);
    this.#name = options.name ?? 'cache';
    this.#clock = options.clock ?? realClock;
    this.#periodMs = options.periodMs ?? DEFAULT_MUTATION_PERIOD_MS;
    this.#retentionMs = options.retentionMs ?? 120_000;
    this.#onMutation = options.onMutation;
    this.#maxChanges = options.maxChanges ?? DEFAULT_MAX_CHANGES;
    this.#lastRotated = this.#clock.now();
  }

  /** How many copies are held now (both generations). */
  get size(): number {
    return this.#current.length + this.#retained.length;
  }

  /** Copies `obj` and watches it. Tombstones and non-objects are ignored (there is nothing to check). */
  addObject(key: string, obj: unknown): void {
    if (obj === null || typeof obj !== 'object' || obj instanceof DeletedFinalStateUnknown) return;
    this.#rotate();
    this.#current.push({ key, live: obj, copy: clone(obj) });
  }

  /**
   * Drops expired copies, then compares every live object with its copy. Each difference is
   * published on `channels.cacheMutation` (`{ key, diff }`) and passed to `onMutation`; all are
   * returned. A throw from `onMutation` propagates.
   */
  compareObjects(): CacheMutationError[] {
    this.#rotate();
    const found: CacheMutationError[] = [];
    this.#check(this.#retained, found);
    this.#check(this.#current, found);
    for (const error of found) {
      publish(channels.cacheMutation, { key: error.key, diff: error.diff });
      this.#onMutation?.(error);
    }
    return found;
  }

  /**
   * Runs `compareObjects` every `periodMs` until `signal` aborts, then runs it one last time — so a
   * mutation made just before the stop (a test shorter than one period) is still reported — and
   * resolves with no timer left. Rejects with the first {@link CacheMutationError} when no
   * `onMutation` is set (with one, it keeps going, and resolves after the last comparison has passed
   * its findings to `onMutation`), with what `onMutation` threw, or with code `ALREADY_STARTED` when
   * already running. An already aborted `signal` gets the one last comparison.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) {
      throw new AlreadyStartedError(`mutation detector for ${this.#name}`);
    }
    this.#running = true;
    try {
      while (await sleep(this.#clock, this.#periodMs, signal)) this.#compareOrThrow();
      this.#compareOrThrow();
    } finally {
      this.#running = false;
    }
  }

  /** One comparison for `run`: throws the first mutation found when nobody else receives it. */
  #compareOrThrow(): void {
    const found = this.compareObjects();
    if (found.length > 0 && this.#onMutation === undefined) throw found[0];
  }

  /** Moves to a new generation every `retentionMs`: the current one is retained, the retained dropped. */
  #rotate(): void {
    const elapsed = this.#clock.now() - this.#lastRotated;
    if (elapsed < this.#retentionMs) return;
    const rotations = Math.floor(elapsed / this.#retentionMs);
    this.#retained = rotations === 1 ? this.#current : [];
    this.#current = [];
    this.#lastRotated += rotations * this.#retentionMs;
  }

  #check(entries: Entry[], found: CacheMutationError[]): void {
    for (const entry of entries) {
      if (deepEqual(entry.live, entry.copy)) continue;
      const changes = diffObjects(entry.copy, entry.live, this.#maxChanges + 1);
      const truncated = changes.length > this.#maxChanges;
      found.push(new CacheMutationError(this.#name, entry.key, truncated ? changes.slice(0, this.#maxChanges) : changes, truncated));
      entry.copy = clone(entry.live);
    }
  }
}

/** The detector used when detection is off: copies nothing, finds nothing, and `run` just waits. */
export class NoopCacheMutationDetector implements MutationDetector {
  /** Always false for this class. */
  readonly enabled = false;

  /** Does nothing. */
  addObject(key: string, obj: unknown): void {
    void key;
    void obj;
  }

  /** Finds nothing. */
  compareObjects(): CacheMutationError[] {
    return [];
  }

  /** Resolves when `signal` aborts (at once if it already has); sets no timer. */
  run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

/**
 * True when `KUBE_CACHE_MUTATION_DETECTOR` in `env` reads as true the way Go's `strconv.ParseBool`
 * does: `1`, `t`, `T`, `true`, `TRUE` or `True`.
 */
export function cacheMutationDetectorEnabled(env: Record<string, string | undefined> = process.env): boolean {
  const v = env.KUBE_CACHE_MUTATION_DETECTOR;
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

/**
 * A {@link CacheMutationDetector} when `options.enabled` (default: the `KUBE_CACHE_MUTATION_DETECTOR`
 * environment variable) is true, else a {@link NoopCacheMutationDetector} that costs nothing.
 */
export function newCacheMutationDetector(options: CacheMutationDetectorOptions = {}): MutationDetector {
  validateOptions('CacheMutationDetector', options, MUTATION_DETECTOR_OPTION_SCHEMA);
  const enabled = options.enabled ?? cacheMutationDetectorEnabled();
  return enabled ? new CacheMutationDetector(options) : new NoopCacheMutationDetector();
}

