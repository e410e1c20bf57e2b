// The exact check of the real-churn test: a cache against a list served at exactly the cache's resource version, and a handler's history against the cache.

import type { KubeObject } from '../../src/core/index.js';
import type { SharedIndexInformer } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/index.js';

type Versions = Map<string, string>;

const keyOf = (o: KubeObject): string => (o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? ''));
const rvOf = (o: unknown): string => (o as KubeObject).metadata?.resourceVersion ?? '';

/** A handler that rebuilds the cache from what it was told: key → resource version. */
export class HandlerHistory {
  readonly state: Versions = new Map();
  /** Events seen, for the report. */
  events = 0;

  /** The handler to register. */
  readonly handler = {
    onAdd: (o: unknown) => this.#set(o),
    onUpdate: (_old: unknown, o: unknown) => this.#set(o),
    onDelete: (o: unknown) => {
      this.events++;
      const key = (o as { key?: string }).key ?? keyOf(o as KubeObject);
      this.state.delete(key);
    },
  };

  #set(o: unknown): void {
    this.events++;
    this.state.set(keyOf(o as KubeObject), rvOf(o));
  }
}

/** The first differences between two key → version maps, as lines (at most `limit`). */
export function differences(expected: Versions, actual: Versions, limit = 10): string[] {
  const out: string[] = [];
  for (const [k, v] of expected) if (actual.get(k) !== v) out.push(`${k}: expected ${v}, got ${actual.get(k) ?? 'nothing'}`);
  for (const [k, v] of actual) if (!expected.has(k)) out.push(`${k}: unexpected (${v})`);
  return out.slice(0, limit);
}

/** Every object of a list served at exactly `rv` (paginated), as key → version. */
async function listExact(lw: ListerWatcher<unknown>, rv: string, signal: AbortSignal): Promise<Versions> {
  const out: Versions = new Map();
  let token: string | undefined;
  do {
    const page = await lw.list(token === undefined ? { resourceVersion: rv, resourceVersionMatch: 'Exact', limit: 500 } : { continue: token, limit: 500 }, signal);
    for (const item of page.items ?? []) out.set(keyOf(item as KubeObject), rvOf(item));
    token = page.metadata.continue === undefined || page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (token !== undefined);
  return out;
}

/** What {@link checkExact} found for one informer. */
export interface ExactResult {
  name: string;
  resourceVersion: string;
  objects: number;
  /** Cache vs the list at the cache's version. */
  cacheDiff: string[];
  /** Handler history vs the cache. */
  handlerDiff: string[];
}

/**
 * Compares `informer`'s cache with a list served at exactly the cache's resource version (etcd keeps
 * history: the harness never compacts), and the handler's history with the cache. The cache must hold
 * still meanwhile: when it moved, it tries again (up to `attempts`).
 */
export async function checkExact(informer: SharedIndexInformer<unknown>, history: HandlerHistory, lw: ListerWatcher<unknown>, signal: AbortSignal, attempts = 20): Promise<ExactResult> {
  for (let i = 0; ; i++) {
    const rv = informer.lastSyncResourceVersion();
    await informer.awaitResourceVersion(rv, signal); // everything received is in the cache
    const backlogs = (): number => informer.health().handlers.reduce((n, h) => n + h.backlog, 0);
    for (let w = 0; w < 200 && backlogs() > 0; w++) await new Promise((resolve) => setTimeout(resolve, 10));
    const cache: Versions = new Map(informer.getIndexer().listKeys().map((k) => [k, rvOf(informer.getIndexer().getByKey(k))]));
    const handlerDiff = differences(cache, history.state);
    const listed = await listExact(lw, rv, signal);
    if (informer.lastSyncResourceVersion() !== rv && i < attempts) continue; // it moved: look again
    return { name: informer.name, resourceVersion: rv, objects: cache.size, cacheDiff: differences(listed, cache), handlerDiff };
  }
}
