// Records what one event handler was told: replays add/update/delete into a map and checks each key's RV only moves forward.

import { DeletedFinalStateUnknown } from '../src/core/keys.js';
import type { SoakObject } from './workload.js';

/** The three callbacks every contender drives; `oldObj` is undefined where the informer does not give it. */
export interface SoakHandler {
  /** An object appeared. */
  onAdd(obj: SoakObject): void | Promise<void>;
  /** An object changed (`oldObj` undefined when the informer does not pass the old state). */
  onUpdate(oldObj: SoakObject | undefined, newObj: SoakObject): void | Promise<void>;
  /** An object went away (possibly as a tombstone whose final state is unknown). */
  onDelete(obj: SoakObject | DeletedFinalStateUnknown<SoakObject>): void | Promise<void>;
}

/** Something in a handler's history that no correct history contains. */
export interface HistoryAnomaly {
  /** Which rule broke. */
  readonly kind: 'rv-regression' | 'add-of-present-key' | 'update-of-absent-key' | 'delete-of-absent-key' | 'stale-old-object' | 'no-key';
  /** The object's key. */
  readonly key: string;
  /** Human-readable facts (resource versions involved). */
  readonly detail: string;
  /** Index of the call in this handler's history. */
  readonly call: number;
}

/** Options of {@link HandlerRecorder}. */
export interface HandlerRecorderOptions {
  /** Name in reports. */
  name: string;
  /** Every `slowEvery`-th call waits `slowMs` (a slow handler). Default 0 = never. */
  slowEvery?: number;
  /** How long a slow call waits, in ms. Default 2. */
  slowMs?: number;
  /** Anomalies kept in full (all are counted). Default 20. */
  keepAnomalies?: number;
}

function rvOf(obj: SoakObject | undefined): bigint | undefined {
  const rv = obj?.metadata?.resourceVersion;
  if (typeof rv !== 'string' || !/^[0-9]+$/.test(rv)) return undefined;
  return BigInt(rv);
}

function keyOf(obj: SoakObject | undefined): string | undefined {
  const name = obj?.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const ns = obj?.metadata?.namespace;
  return typeof ns === 'string' && ns !== '' ? `${ns}/${name}` : name;
}

/**
 * A handler that remembers its history as a replayed map (`key → resourceVersion`) and checks it as
 * it goes: per-key resource versions never go back, adds only for absent keys, updates and deletes
 * only for present ones, and an update's old object is the one this handler was last given.
 */
export class HandlerRecorder implements SoakHandler {
  readonly name: string;
  readonly #state = new Map<string, string>();
  readonly #lastRv = new Map<string, bigint>();
  readonly #anomalies: HistoryAnomaly[] = [];
  readonly #keep: number;
  readonly #slowEvery: number;
  readonly #slowMs: number;
  #anomalyCount = 0;
  readonly #byKind: Partial<Record<HistoryAnomaly['kind'], number>> = {};
  #calls = 0;
  #maxRv = 0n;
  readonly #counts = { add: 0, update: 0, delete: 0 };

  /** See {@link HandlerRecorderOptions}. */
  constructor(options: HandlerRecorderOptions) {
    this.name = options.name;
    this.#keep = options.keepAnomalies ?? 20;
    this.#slowEvery = options.slowEvery ?? 0;
    this.#slowMs = options.slowMs ?? 2;
  }

  /** The replayed state: every key this handler believes exists, with its resource version. */
  state(): ReadonlyMap<string, string> {
    return this.#state;
  }

  /** Calls received so far, by kind. */
  counts(): { add: number; update: number; delete: number } {
    return { ...this.#counts };
  }

  /** The highest resource version this handler has seen. */
  maxResourceVersion(): bigint {
    return this.#maxRv;
  }

  /** How many anomalies were found (in all and by kind), and the first few in full. */
  anomalies(): { count: number; byKind: Partial<Record<HistoryAnomaly['kind'], number>>; first: readonly HistoryAnomaly[] } {
    return { count: this.#anomalyCount, byKind: { ...this.#byKind }, first: [...this.#anomalies] };
  }

  onAdd(obj: SoakObject): void | Promise<void> {
    const key = this.#see(obj);
    if (key !== undefined) {
      if (this.#state.has(key)) this.#anomaly('add-of-present-key', key, `had rv ${this.#state.get(key)}, added rv ${obj.metadata?.resourceVersion}`);
      this.#state.set(key, obj.metadata?.resourceVersion ?? '');
    }
    this.#counts.add++;
    return this.#pace();
  }

  onUpdate(oldObj: SoakObject | undefined, newObj: SoakObject): void | Promise<void> {
    const key = this.#see(newObj);
    if (key !== undefined) {
      const had = this.#state.get(key);
      if (had === undefined) this.#anomaly('update-of-absent-key', key, `updated to rv ${newObj.metadata?.resourceVersion}`);
      else if (oldObj !== undefined && oldObj.metadata?.resourceVersion !== had) {
        this.#anomaly('stale-old-object', key, `old object has rv ${oldObj.metadata?.resourceVersion}, handler last saw rv ${had}`);
      }
      this.#state.set(key, newObj.metadata?.resourceVersion ?? '');
    }
    this.#counts.update++;
    return this.#pace();
  }

  onDelete(obj: SoakObject | DeletedFinalStateUnknown<SoakObject>): void | Promise<void> {
    const inner = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const key = obj instanceof DeletedFinalStateUnknown ? obj.key : this.#see(inner);
    if (obj instanceof DeletedFinalStateUnknown) this.#see(inner);
    if (key !== undefined) {
      if (!this.#state.delete(key)) this.#anomaly('delete-of-absent-key', key, `delete at rv ${inner?.metadata?.resourceVersion}`);
    }
    this.#counts.delete++;
    return this.#pace();
  }

  /** Checks the key and the per-key resource-version order; returns the key. */
  #see(obj: SoakObject | undefined): string | undefined {
    this.#calls++;
    const key = keyOf(obj);
    if (key === undefined) {
      this.#anomaly('no-key', '?', `object without a name: ${JSON.stringify(obj)?.slice(0, 200)}`);
      return undefined;
    }
    const rv = rvOf(obj);
    if (rv === undefined) return key;
    const last = this.#lastRv.get(key);
    if (last !== undefined && rv < last) this.#anomaly('rv-regression', key, `rv ${rv} after rv ${last}`);
    else this.#lastRv.set(key, rv);
    if (rv > this.#maxRv) this.#maxRv = rv;
    return key;
  }

  #anomaly(kind: HistoryAnomaly['kind'], key: string, detail: string): void {
    this.#anomalyCount++;
    this.#byKind[kind] = (this.#byKind[kind] ?? 0) + 1;
    if (this.#anomalies.length < this.#keep) this.#anomalies.push({ kind, key, detail, call: this.#calls });
  }

  #pace(): void | Promise<void> {
    if (this.#slowEvery <= 0 || this.#calls % this.#slowEvery !== 0) return;
    return new Promise((resolve) => setTimeout(resolve, this.#slowMs));
  }
}
