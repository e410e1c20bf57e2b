// A small in-memory API server with real resource-version semantics and fault switches, for model tests.

import type { Clock, ClockTimer } from '../../src/core/clock.js';
import { ApiStatusError, ErrorCodes, KubeInformerError } from '../../src/core/errors.js';
import type { ListOptions, ObjectList, WatchEvent } from '../../src/listwatch/types.js';
import { FakeWatch, bookmark, connRefused, pod } from './helpers.js';
import type { Pod, ScriptedLW } from './helpers.js';

interface LogEntry {
  rv: number;
  event: WatchEvent<Pod>;
}

/**
 * Serves one collection through a {@link ScriptedLW}'s fallbacks: lists (paged by snapshot tokens),
 * watches that replay history after the requested version (410 once compacted), streaming lists, and
 * server-side watch timeouts on the clock. Fault switches make the next request or the open streams fail.
 */
export class ModelSource {
  readonly objects = new Map<string, Pod>();
  rv = 100;
  compactedRv = 0;
  /** Deletes carry the object's previous version instead of the delete's (the 2017 server bug). */
  staleDeletes = false;
  readonly #log: LogEntry[] = [];
  readonly #live = new Set<{ watch: FakeWatch<Pod>; stalled: boolean }>();
  readonly #timers = new Set<ClockTimer>();
  readonly #tokens = new Map<string, { rv: number; items: Pod[] }>();
  readonly #clock: Clock;
  listFaults: Error[] = [];
  watchFaults: Error[] = [];
  /** Requests with `resourceVersion: ""` not preceded by a 410 / too-large answer to a list. */
  readonly violations: string[] = [];
  #emptyAllowed = false;

  constructor(lw: ScriptedLW<Pod>, clock: Clock) {
    this.#clock = clock;
    lw.fallbackList = (o) => this.#list(o);
    lw.fallbackWatch = (o) => this.#watch(o);
  }

  #bump(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Pod, eventRv: string): void {
    const event = { type, object: { ...obj, metadata: { ...obj.metadata, resourceVersion: eventRv } } };
    this.#log.push({ rv: this.rv, event });
    for (const l of this.#live) if (!l.stalled) l.watch.push(event);
  }

  /** Creates or updates `name`. */
  upsert(name: string): void {
    this.rv++;
    const type = this.objects.has(name) ? 'MODIFIED' : 'ADDED';
    const obj = pod(name, String(this.rv), { spec: { at: this.rv } });
    this.objects.set(name, obj);
    this.#bump(type, obj, String(this.rv));
  }

  /** Deletes `name` (no-op when absent). */
  remove(name: string): void {
    const old = this.objects.get(name);
    if (old === undefined) return;
    this.rv++;
    this.objects.delete(name);
    this.#bump('DELETED', old, this.staleDeletes ? (old.metadata.resourceVersion ?? '') : String(this.rv));
  }

  /** Forgets history up to now: watches and continue tokens older than this answer 410. */
  compact(): void {
    this.compactedRv = this.rv;
  }

  /** Closes every open watch normally. */
  dropWatches(): void {
    for (const l of this.#live) l.watch.close();
  }

  /** Open watches stop delivering anything (half-open connections). */
  stallWatches(): void {
    for (const l of this.#live) l.stalled = true;
  }

  /** Open watches get `event` (e.g. a 410 ERROR or a bogus type). */
  injectEvent(event: WatchEvent<Pod>): void {
    for (const l of this.#live) if (!l.stalled) l.watch.push(event);
  }

  /** Open watches throw `err` on their next read. */
  breakWatches(err: Error): void {
    for (const l of this.#live) if (!l.stalled) l.watch.fail(err);
  }

  /** Open watches, a pending timer each. */
  openWatches(): number {
    return this.#live.size;
  }

  #expired(what: string): ApiStatusError {
    this.#emptyAllowed = true;
    return new ApiStatusError(410, `${what}: too old resource version`, { reason: 'Expired' });
  }

  #list(o: ListOptions): ObjectList<Pod> {
    const fault = this.listFaults.shift();
    if (o.resourceVersion === '' && !this.#emptyAllowed) this.violations.push(`list "" without a 410 before`);
    if (fault !== undefined) throw fault;
    if (o.continue !== undefined) {
      const snap = this.#tokens.get(o.continue);
      if (snap === undefined || snap.rv < this.compactedRv) throw this.#expired('continue');
      return this.#page(snap, o.continue, o.limit);
    }
    const asked = o.resourceVersion;
    if (asked !== undefined && asked !== '' && asked !== '0' && Number(asked) > this.rv) {
      this.#emptyAllowed = true;
      throw new ApiStatusError(504, 'Too large resource version', { status: { code: 504, details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } } });
    }
    if (asked === '') this.#emptyAllowed = false;
    const items = [...this.objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    return this.#page({ rv: this.rv, items }, '0', o.limit);
  }

  #page(snap: { rv: number; items: Pod[] }, token: string, limit: number | undefined): ObjectList<Pod> {
    const offset = token.includes(':') ? Number(token.split(':')[1]) : 0;
    const end = limit ? offset + limit : snap.items.length;
    const items = snap.items.slice(offset, end);
    let cont: string | undefined;
    if (end < snap.items.length) {
      cont = `${snap.rv}:${end}`;
      this.#tokens.set(cont, snap);
    }
    return { metadata: { resourceVersion: String(snap.rv), ...(cont ? { continue: cont } : {}) }, items };
  }

  #watch(o: ListOptions): FakeWatch<Pod> {
    const fault = this.watchFaults.shift();
    if (fault !== undefined) throw fault;
    const asked = o.resourceVersion ?? '';
    if (asked === '' && !o.sendInitialEvents) this.violations.push('watch from ""');
    const w = new FakeWatch<Pod>();
    if (o.sendInitialEvents || asked === '' || asked === '0') {
      for (const obj of this.objects.values()) w.push({ type: 'ADDED', object: obj });
      if (o.sendInitialEvents) w.push(bookmark(String(this.rv), true));
    } else {
      if (Number(asked) < this.compactedRv) throw this.#expired('watch');
      for (const e of this.#log) if (e.rv > Number(asked)) w.push(e.event);
    }
    const entry = { watch: w, stalled: false };
    this.#live.add(entry);
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(timer);
      if (!entry.stalled) w.close();
    }, (o.timeoutSeconds ?? 300) * 1000);
    this.#timers.add(timer);
    w.onStop = () => {
      this.#live.delete(entry);
      this.#clock.clearTimeout(timer);
      this.#timers.delete(timer);
    };
    return w;
  }

  /** The objects as `{ name: rv }`, sorted. */
  snapshot(): Record<string, string | undefined> {
    return Object.fromEntries([...this.objects.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v.metadata.resourceVersion]));
  }
}

/** Faults the model test draws from. */
export const faults = {
  refused: connRefused,
  throttled: () => new ApiStatusError(429, 'slow down', { retryAfterSeconds: 2 }),
  listBroken: () => new Error('list failed'),
  decode: () => new KubeInformerError(ErrorCodes.WATCH_DECODE, 'malformed watch line'),
  reset: () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
};
