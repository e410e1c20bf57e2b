// The soak's workload: creates, updates and deletes ConfigMaps across namespaces at a steady rate.

import type { FakeApiServer } from '../src/testing/index.js';
import type { Prng } from './prng.js';

/** The resource the soak works on (core ConfigMaps: namespaced, no status, cheap to serialize). */
export const SOAK_RESOURCE = { group: '', version: 'v1', resource: 'configmaps' } as const;

/** The object shape the workload writes. */
export interface SoakObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  data?: Record<string, string>;
}

/** Options of {@link Workload}. */
export interface WorkloadOptions {
  /** Namespaces objects are spread over. Default 8. */
  namespaces?: number;
  /** The population the workload steers towards (creates below it, deletes above it). Default 500. */
  targetObjects?: number;
  /** Bytes of random payload per object. Default 64. */
  payloadBytes?: number;
  /** Share of creates that reuse a recently deleted name (delete + re-create of one key). Default 0.2. */
  reuseNames?: number;
}

/** One write the workload made. */
export interface WorkloadOp {
  /** What it did. */
  readonly type: 'create' | 'update' | 'delete';
  /** `namespace/name`. */
  readonly key: string;
  /** The resource version the server gave the write. */
  readonly resourceVersion: string;
}

/**
 * A seeded generator of writes against a fake API server's state. Every write is synchronous (a state
 * op of the test kit) and is broadcast to open watches at once. The sequence of operations depends
 * only on the seed, never on timing.
 */
export class Workload {
  readonly #server: FakeApiServer;
  readonly #prng: Prng;
  readonly #namespaces: string[];
  readonly #target: number;
  readonly #payloadBytes: number;
  readonly #reuse: number;
  /** Live keys, for O(1) random choice and swap-removal. */
  readonly #keys: string[] = [];
  readonly #index = new Map<string, number>();
  readonly #deleted: string[] = [];
  #serial = 0;
  #writes = 0;
  readonly #counts = { create: 0, update: 0, delete: 0 };

  /** Options default as documented in {@link WorkloadOptions}. */
  constructor(server: FakeApiServer, prng: Prng, options: WorkloadOptions = {}) {
    this.#server = server;
    this.#prng = prng;
    const n = options.namespaces ?? 8;
    this.#namespaces = Array.from({ length: n }, (_, i) => `soak-${i}`);
    this.#target = options.targetObjects ?? 500;
    this.#payloadBytes = options.payloadBytes ?? 64;
    this.#reuse = options.reuseNames ?? 0.2;
  }

  /** Writes made so far (prefill included). */
  get writes(): number {
    return this.#writes;
  }

  /** Creates, updates and deletes made so far. */
  counts(): { create: number; update: number; delete: number } {
    return { ...this.#counts };
  }

  /** How many objects exist now. */
  population(): number {
    return this.#keys.length;
  }

  /** Creates `count` objects before the informer starts (its initial list). */
  prefill(count: number): void {
    for (let i = 0; i < count; i++) this.#create();
  }

  /** Makes one write, chosen by the PRNG and steered towards the target population. */
  step(): WorkloadOp {
    const pop = this.#keys.length;
    const r = this.#prng.next();
    // Below target: mostly creates; above: mostly deletes; updates are always the bulk.
    const createP = pop === 0 ? 1 : pop < this.#target ? 0.3 : 0.1;
    const deleteP = pop === 0 ? 0 : pop > this.#target ? 0.3 : 0.1;
    if (r < createP) return this.#create();
    if (r < createP + deleteP) return this.#delete();
    return this.#update();
  }

  #payload(): Record<string, string> {
    return { v: String(this.#writes), payload: this.#prng.string(this.#payloadBytes) };
  }

  #create(): WorkloadOp {
    let namespace: string;
    let name: string;
    if (this.#deleted.length > 0 && this.#prng.chance(this.#reuse)) {
      const i = this.#prng.int(0, this.#deleted.length - 1);
      const key = this.#deleted[i];
      this.#deleted[i] = this.#deleted[this.#deleted.length - 1];
      this.#deleted.pop();
      [namespace, name] = key.split('/');
    } else {
      namespace = this.#prng.pick(this.#namespaces);
      name = `cm-${this.#serial++}`;
    }
    const stored = this.#server.create<SoakObject>(SOAK_RESOURCE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace, labels: { soak: 'true', shard: String(this.#serial % 4) } },
      data: this.#payload(),
    });
    const key = `${namespace}/${name}`;
    this.#index.set(key, this.#keys.length);
    this.#keys.push(key);
    return this.#done('create', key, stored);
  }

  #update(): WorkloadOp {
    const key = this.#prng.pick(this.#keys);
    const [namespace, name] = key.split('/');
    const stored = this.#server.update<SoakObject>(SOAK_RESOURCE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace, labels: { soak: 'true', shard: String(this.#writes % 4) } },
      data: this.#payload(),
    });
    return this.#done('update', key, stored);
  }

  #delete(): WorkloadOp {
    const key = this.#prng.pick(this.#keys);
    const [namespace, name] = key.split('/');
    const stored = this.#server.delete<SoakObject>(SOAK_RESOURCE, name, namespace);
    const i = this.#index.get(key) as number;
    const last = this.#keys[this.#keys.length - 1];
    this.#keys[i] = last;
    this.#index.set(last, i);
    this.#keys.pop();
    this.#index.delete(key);
    this.#deleted.push(key);
    if (this.#deleted.length > 1000) this.#deleted.shift();
    return this.#done('delete', key, stored);
  }

  #done(type: WorkloadOp['type'], key: string, stored: SoakObject): WorkloadOp {
    this.#writes++;
    this.#counts[type]++;
    return { type, key, resourceVersion: stored.metadata?.resourceVersion ?? '' };
  }
}
