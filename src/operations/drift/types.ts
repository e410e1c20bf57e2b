// The drift audit's options, report and counters.

import type { Clock } from '../../core/clock.js';
import type { LoggerOption } from '../../core/log.js';
import type { GroupVersionResource, ListerWatcher } from '../../listwatch/types.js';
import type { Divergence } from './diff.js';

/** What a {@link DriftAudit} needs of an informer (a `SharedIndexInformer`). */
export interface AuditedInformer {
  /** Its name (`v1/pods`), for log lines and metric labels. */
  readonly name: string;
  /** Its cache. */
  getIndexer(): AuditedCache;
  /** Resolves once synced. */
  whenSynced(signal?: AbortSignal): Promise<void>;
  /** Resolves once the cache has applied every change up to `rv`. */
  awaitResourceVersion(rv: string, signal?: AbortSignal): Promise<void>;
  /** Replaces the cache by a consistent list. */
  relist(signal?: AbortSignal): Promise<void>;
  /** True once it stopped. */
  isStopped(): boolean;
}

/** What a {@link DriftAudit} reads of an informer's cache (its `Indexer`). */
export interface AuditedCache {
  /** Every key held. */
  listKeys(): string[];
  /** The object held under `key`, or `undefined`. */
  getByKey(key: string): unknown;
}

/** Options of a {@link DriftAudit}. */
export interface DriftAuditOptions {
  /** The informer's resource: listed metadata-only through the constructor's kubeConfig. Required unless `listWatch` is given. */
  resource?: GroupVersionResource;
  /** The informer's namespace. Default: all namespaces. */
  namespace?: string;
  /** The informer's label selector. Default: none. */
  labelSelector?: string;
  /** The informer's field selector. Default: none. */
  fieldSelector?: string;
  /** List through this instead (it must see what the informer sees). Default: a metadata-only `newListWatch` of `resource`. */
  listWatch?: ListerWatcher<unknown>;
  /** Time between audits, in ms; the first comes one interval after the cache synced. Default 600 000 (10 minutes). */
  intervalMs?: number;
  /** Each interval is stretched or shrunk by up to this fraction at random, so replicas do not list together. Default 0.1. */
  jitter?: number;
  /**
   * How long an audit that saw differences waits for the cache to apply everything up to the list's
   * resource version before it judges, in ms. A quiet resource moves only with bookmarks (about one a
   * minute from kube-apiserver), hence the default. Default 90 000.
   */
  settleTimeoutMs?: number;
  /** The longest one list page may take, in ms. Default 120 000. */
  listTimeoutMs?: number;
  /** Objects per list page. Default 500. */
  pageSize?: number;
  /** Relist the informer (`informer.relist()`) when an audit finds differences. Default `false`: report only. */
  repair?: boolean;
  /** Time and timers. Default: the real clock. */
  clock?: Clock;
  /** Uniform random numbers in `[0, 1)`, for the intervals' jitter. Default `Math.random`. */
  random?: () => number;
  /** Where audits are logged (a divergence as a warning); `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/** What one audit found. */
export interface DriftReport {
  /** The informer's name. */
  readonly informer: string;
  /** The list's resource version: the cut at which the cache was compared with the server. */
  readonly listResourceVersion: string;
  /** Objects the server listed. */
  readonly listed: number;
  /** Objects in the cache when the audit ended. */
  readonly cached: number;
  /** Keys that differ: `missing + extra + stale`. 0 on a healthy cache. */
  readonly divergent: number;
  /** Listed by the server, absent from the cache (a missed ADDED), confirmed by a second list. */
  readonly missing: number;
  /** In the cache at or before the cut, absent from the server (a missed DELETED). */
  readonly extra: number;
  /** In the cache at an older resource version than listed (a missed MODIFIED). */
  readonly stale: number;
  /** The first 100 divergent keys. */
  readonly divergences: readonly Divergence[];
  /**
   * True when the cache reached the list's resource version before the audit judged (or had nothing
   * to settle). False means it did not within `settleTimeoutMs`: the watch lags or is stalled, and the
   * keys it names may be only late.
   */
  readonly caughtUp: boolean;
  /** How long the audit took, in ms (lists, waits and the comparison; not the repair). */
  readonly durationMs: number;
  /** True when the audit relisted the informer (`repair`). */
  readonly repaired: boolean;
  /** When it ended (the clock's ms). */
  readonly at: number;
}

/** A {@link DriftAudit}'s counters since it was created. */
export interface DriftAuditStats {
  /** Audits by outcome. */
  readonly audits: DriftAuditCounts;
  /** Relists done to repair. */
  readonly repairs: number;
  /** The last completed audit's report. */
  readonly last: DriftReport | undefined;
}

/** Audits by outcome (see {@link DriftAuditStats}). */
export interface DriftAuditCounts {
  /** The cache equalled the server. */
  readonly clean: number;
  /** Differences found. */
  readonly divergent: number;
  /** The audit could not finish: its list failed. */
  readonly failed: number;
}
