// An in-memory ResourceLock with the Lease's optimistic concurrency, for tests and single-process use.

import type { HasPermissions, Permission } from '../core/permissions.js';
import { AbortedError } from '../core/errors.js';
import { validateOptions } from '../core/options.js';
import { LeaderElectionError, LockConflictError, LockNotFoundError, type LeaderElectionRecord, type ResourceLock } from './lock.js';

/** A record read from an {@link InMemoryLockStore}, with the version it had. */
export interface InMemoryLockSnapshot {
  /** A copy of the stored record. */
  record: LeaderElectionRecord;
  /** The store's version when it was read. */
  version: number;
}

/**
 * The shared "object" several {@link InMemoryLock}s compete for: one record and a version that moves on
 * every write (the stand-in for a Lease's `resourceVersion`).
 */
export class InMemoryLockStore {
  #record: LeaderElectionRecord | undefined;
  #version = 0;
  readonly #watchers = new Set<(record: LeaderElectionRecord) => void>();

  /** How many watches ({@link InMemoryLock.watch}) are open on the store: 0 once every elector stopped. */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Calls `listener` with a copy of the record after each write, until the returned function is called. */
  subscribe(listener: (record: LeaderElectionRecord) => void): () => void {
    const entry = (record: LeaderElectionRecord): void => listener(record);
    this.#watchers.add(entry);
    return () => void this.#watchers.delete(entry);
  }

  #notify(): void {
    for (const watcher of [...this.#watchers]) watcher(copy(this.#record as LeaderElectionRecord));
  }

  /** The stored record (a copy), or `undefined` before anyone created it. */
  get record(): LeaderElectionRecord | undefined {
    return this.#record === undefined ? undefined : copy(this.#record);
  }

  /** The current version; 0 before creation. */
  get version(): number {
    return this.#version;
  }

  /** Reads the record and its version. */
  read(): InMemoryLockSnapshot | undefined {
    return this.#record === undefined ? undefined : { record: copy(this.#record), version: this.#version };
  }

  /** Creates the record; fails with a conflict if it exists. Returns the new version. */
  create(record: LeaderElectionRecord): number {
    if (this.#record !== undefined) throw new LockConflictError('the lock already exists');
    this.#record = copy(record);
    this.#version++;
    this.#notify();
    return this.#version;
  }

  /** Replaces the record if `expectedVersion` is current; fails with a conflict otherwise. */
  update(record: LeaderElectionRecord, expectedVersion: number): number {
    if (this.#record === undefined) throw new LockNotFoundError('the lock does not exist');
    if (expectedVersion !== this.#version) {
      throw new LockConflictError(`the lock changed (version ${this.#version}, expected ${expectedVersion})`);
    }
    this.#record = copy(record);
    this.#version++;
    this.#notify();
    return this.#version;
  }

  /** Writes the record unconditionally (a test pretending to be another writer). */
  forceWrite(record: LeaderElectionRecord): void {
    this.#record = copy(record);
    this.#version++;
    this.#notify();
  }
}

function copy(record: LeaderElectionRecord): LeaderElectionRecord {
  return {
    ...record,
    acquireTime: record.acquireTime === undefined ? undefined : new Date(record.acquireTime.getTime()),
    renewTime: record.renewTime === undefined ? undefined : new Date(record.renewTime.getTime()),
  };
}

/** Options of an {@link InMemoryLock}. */
export interface InMemoryLockOptions {
  /**
   * Whether the lock offers {@link ResourceLock.watch} (a following elector then tries at once when the
   * record is released); `false` makes a lock that only polls, as a `LeaseLock` without `watch`.
   * Default `true`.
   */
  watch?: boolean;
}

/**
 * A {@link ResourceLock} over an {@link InMemoryLockStore}: give every candidate its own lock on one
 * shared store. Behaves like a Lease (not-found, conflict on create, compare-and-swap on update) but
 * answers synchronously (in a resolved promise); its `watch` reports each write on a microtask.
 */
export class InMemoryLock implements ResourceLock, HasPermissions {
  readonly #store: InMemoryLockStore;
  readonly #identity: string;
  #seenVersion: number | undefined;

  /**
   * `identity` is this candidate's name; `store` is shared with the other candidates. Throws
   * `INVALID_OPTION` for an unknown option or one of the wrong type.
   */
  constructor(identity: string, store: InMemoryLockStore = new InMemoryLockStore(), options: InMemoryLockOptions = {}) {
    validateOptions('InMemoryLock', options, { watch: 'boolean' });
    this.#identity = identity;
    this.#store = store;
    if (options.watch === false) this.watch = undefined;
  }

  /**
   * Reports the current record (if any), then every write to the store, each on a microtask; resolves
   * when `signal` aborts. See {@link ResourceLock.watch}. `undefined` with the option `watch: false`.
   */
  watch?: (onChange: (record: LeaderElectionRecord) => void, signal: AbortSignal) => Promise<void> = (onChange, signal) => {
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const report = (record: LeaderElectionRecord): void =>
        queueMicrotask(() => {
          if (!signal.aborted) onChange(record);
        });
      const unsubscribe = this.#store.subscribe(report);
      const current = this.#store.read();
      if (current !== undefined) report(current.record);
      signal.addEventListener('abort', () => {
        unsubscribe();
        resolve();
      }, { once: true });
    });
  };

  /** The shared store. */
  get store(): InMemoryLockStore {
    return this.#store;
  }

  /** Reads the record, remembering its version for the next update. */
  async get(signal?: AbortSignal): Promise<LeaderElectionRecord> {
    checkSignal(signal);
    const current = this.#store.read();
    if (current === undefined) throw new LockNotFoundError(`lock ${this.describe()} not found`);
    this.#seenVersion = current.version;
    return current.record;
  }

  /** Creates the record. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    checkSignal(signal);
    this.#seenVersion = this.#store.create(record);
  }

  /** Replaces the record if nobody wrote since this lock last read or wrote. */
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    checkSignal(signal);
    if (this.#seenVersion === undefined) {
      throw new LeaderElectionError('not-initialized', 'lock not initialized: call get or create first');
    }
    this.#seenVersion = this.#store.update(record, this.#seenVersion);
  }

  /** Nothing: the lock lives in memory, not on the API server (see `HasPermissions`). */
  permissions(): Permission[] {
    return [];
  }

  /** This candidate's identity. */
  identity(): string {
    return this.#identity;
  }

  /** `in-memory/<identity>`. */
  describe(): string {
    return `in-memory/${this.#identity}`;
  }
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError();
}
