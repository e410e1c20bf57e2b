// Informer metrics that none of the anchors export, read from health() when Prometheus scrapes, over the user's own prom-client module.

import { validateOptions } from '../core/options.js';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { InformerHealth } from '../informer/index.js';
import type { DriftAuditStats } from './drift/types.js';
import { channelNames } from '../observability/channels.js';
import type { PromRegistryLike } from '../observability/index.js';
import type { ShardRingHealth } from '../sharding/ring-options.js';

/** The metric names {@link registerInformerMetrics} registers (before any prefix). Label `informer` on each. */
export const informerMetricNames = {
  /** Counter: lists completed and handed to the cache, the first one included. */
  lists: 'kube_informer_lists_total',
  /** Counter: completed lists after the first. */
  relists: 'kube_informer_relists_total',
  /** Counter: watch streams opened. */
  watches: 'kube_informer_watches_total',
  /** Counter, labels `phase`, `reason`: errors the reflector reported (failed requests, warnings, skipped events), by where and why. */
  errors: 'kube_informer_errors_total',
  /** Counter: ADDED, MODIFIED and DELETED events applied to the cache. */
  events: 'kube_informer_events_total',
  /** Counter: BOOKMARK events received. */
  bookmarks: 'kube_informer_bookmarks_total',
  /** Counter: events or lists whose resource version went backwards (rejected, or adopted). */
  regressions: 'kube_informer_regressions_total',
  /** Counter: handler callbacks that threw or rejected. */
  handlerErrors: 'kube_informer_handler_errors_total',
  /** Gauge: seconds since the last watch event (bookmarks included); absent before the first. */
  lastEventAge: 'kube_informer_last_event_age_seconds',
  /** Gauge: seconds since the last bookmark; absent before the first. */
  lastBookmarkAge: 'kube_informer_last_bookmark_age_seconds',
  /** Gauge, label `handler`: notifications buffered and not yet delivered to a handler. */
  handlerBacklog: 'kube_informer_handler_backlog',
  /** Gauge: 1 when the cache is synced. */
  synced: 'kube_informer_synced',
  /** Gauge: 1 when `health().ready`. */
  ready: 'kube_informer_ready',
  /** Gauge: 1 when `health().live`. */
  live: 'kube_informer_live',
  /** Gauge: 1 while a watch is open. */
  watchConnected: 'kube_informer_watch_connected',
  /** Counter, label `result` (`clean`, `divergent`, `failed`): drift audits done (with `audits`). */
  driftAudits: 'kube_informer_drift_audits_total',
  /** Gauge, label `kind` (`missing`, `extra`, `stale`): divergent keys the last drift audit found. */
  driftObjects: 'kube_informer_drift_objects',
  /** Counter: relists a drift audit did to repair the cache. */
  driftRepairs: 'kube_informer_drift_repairs_total',
  /** Gauge: how long the last drift audit took, in seconds. */
  driftDuration: 'kube_informer_drift_audit_duration_seconds',
  /** Gauge: when the last drift audit ended, in seconds since the epoch (of the audit's clock). */
  driftLastAudit: 'kube_informer_drift_last_audit_timestamp_seconds',
  /** Gauge, labels `ring`, `identity`: slots this replica owns (new work may start). */
  shardSlotsOwned: 'kube_informer_shard_slots_owned',
  /** Gauge, labels `ring`, `identity`: slots being handed over (draining, claimed or released). */
  shardPendingHandovers: 'kube_informer_shard_pending_handovers',
  /** Gauge, labels `ring`, `identity`: live members this replica sees, itself included. */
  shardMembers: 'kube_informer_shard_members',
  /** Gauge, labels `ring`, `identity`: seconds since the owned set last changed; absent before the first. */
  shardLastRebalanceAge: 'kube_informer_shard_last_rebalance_age_seconds',
  /** Gauge, labels `ring`, `identity`: reads of the ring's Leases that failed in a row (0 when healthy). */
  shardReadFailures: 'kube_informer_shard_read_failures',
  /** Gauge, label `state` (`ready`, `unready`): clusters a `MultiClusterManager` has engaged now. */
  multiClusterClusters: 'kube_informer_multicluster_clusters',
  /** Gauge, label `cluster`: 1 when every informer of the engaged cluster is ready, 0 when not (unreachable, refused, not synced). */
  multiClusterClusterReady: 'kube_informer_multicluster_cluster_ready',
  /** Gauge, label `provider`: 1 when the provider's informers are ready (the management cluster's Secrets), or it has none. */
  multiClusterProviderReady: 'kube_informer_multicluster_provider_ready',
  /** Counter: clusters engaged since the start (re-engages included). */
  multiClusterEngages: 'kube_informer_multicluster_engages_total',
  /** Counter: clusters disengaged since the start (re-engages included). */
  multiClusterDisengages: 'kube_informer_multicluster_disengages_total',
  /** Counter, label `reason` (`missing-key`, `unparsable`, `no-name`, `unauthorized`, `duplicate`, `conflict`, `other`): inputs the providers refused. */
  multiClusterRefused: 'kube_informer_multicluster_refused_total',
} as const;

/** A prom-client metric as a collector uses it: labelled children, and a reset before each scrape. */
interface CollectedMetric {
  labels(...values: string[]): { set(value: number): void; inc(value: number): void };
  reset(): void;
}

/** A prom-client metric class as {@link registerInformerMetrics} constructs it. */
export interface PromCollectorClass {
  /** Creates (and registers) the metric from prom-client's configuration, whose `collect` runs before each scrape. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- prom-client's constructors take its own option types, which this library never imports.
  new (configuration: any): unknown;
}

/** The parts of the `prom-client` module {@link registerInformerMetrics} uses (`import * as promClient from 'prom-client'`). */
export interface PromCollectorClientLike {
  /** prom-client's `Gauge` class. */
  Gauge: PromCollectorClass;
  /** prom-client's `Counter` class. */
  Counter: PromCollectorClass;
  /** prom-client's default registry. */
  register: PromRegistryLike;
}

/** Something with one informer's health (a `SharedIndexInformer`). */
export interface HasInformerHealth {
  /** The informer's health now. */
  health(): InformerHealth;
}

/** Something with the health of many informers, by resource key (a `SharedInformerFactory`). */
export interface HasFactoryHealth {
  /** Every informer's health now, by resource key. */
  health(): Record<string, InformerHealth>;
}

/** Options of {@link registerInformerMetrics}. */
export interface InformerMetricsOptions {
  /** The registry the metrics are registered in. Default: prom-client's default `register`. */
  registry?: PromRegistryLike;
  /** Prepended to every metric name. Default `''`. */
  prefix?: string;
  /** Drift audits whose counters and last report are exported too (the `kube_informer_drift_*` metrics). Default: none. */
  audits?: readonly HasDriftAuditStats[];
  /** Shard rings whose health is exported too (the `kube_informer_shard_*` metrics). Default: none. */
  rings?: readonly HasShardRingHealth[];
  /**
   * A `MultiClusterManager` whose clusters, providers and counters are exported too (the
   * `kube_informer_multicluster_*` metrics); pass it as the source as well for its informers' metrics.
   * Default: none.
   */
  multiCluster?: HasMultiClusterReport;
}

/** A cluster's or a provider's verdict, as the `kube_informer_multicluster_*` metrics read it. */
export interface NamedReadiness {
  /** The cluster's or the provider's name: the `cluster` or `provider` label. */
  readonly name: string;
  /** Whether its informers are ready. */
  readonly ready: boolean;
}

/** What the `kube_informer_multicluster_*` metrics read: a `MultiClusterManager`. */
export interface HasMultiClusterReport {
  /** Each engaged cluster's and each provider's readiness now. */
  readiness(): {
    /** The engaged clusters. */
    readonly clusters: readonly NamedReadiness[];
    /** The providers. */
    readonly providers: readonly NamedReadiness[];
  };
  /** The counters now. */
  stats(): {
    /** Clusters engaged since the start. */
    readonly engages: number;
    /** Clusters disengaged since the start. */
    readonly disengages: number;
    /** Inputs the providers refused, by reason. */
    readonly refusedByReason: Readonly<Record<string, number>>;
  };
}

/** Something with a shard ring's health (a `ShardRing`). */
export interface HasShardRingHealth {
  /** The ring's health now. */
  health(): ShardRingHealth;
}

/** Something with a drift audit's counters (a `DriftAudit`). */
export interface HasDriftAuditStats {
  /** The audited informer's name: the `informer` label. */
  readonly informer: string;
  /** The counters now. */
  stats(): DriftAuditStats;
}

/** What {@link registerInformerMetrics} returns. */
export interface InformerMetricsRegistration {
  /** Stops counting errors (unsubscribes from the reflector-error channel); the metrics stay registered, reading health() still. */
  close(): void;
}

/** Anything with informers' health: a `SharedInformerFactory` (every informer it made, then or later) or a list of informers. */
export type InformerHealthSource = HasFactoryHealth | readonly HasInformerHealth[];

/** Every informer's health now, from either kind of source. */
export function healthOf(source: InformerHealthSource): InformerHealth[] {
  return Array.isArray(source) ? source.map((i: HasInformerHealth) => i.health()) : Object.values((source as HasFactoryHealth).health());
}

/** The `reason` label of a reflector error: its code, with the HTTP status for API errors (`API_STATUS_410`). */
function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; statusCode?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : 'UNKNOWN';
  return code === 'API_STATUS' && typeof e?.statusCode === 'number' ? `${code}_${e.statusCode}` : code;
}

/**
 * Registers the informer metrics in a prom-client registry, read from `health()` of `source` when
 * Prometheus scrapes (nothing is done per event, so the watch path pays nothing): counters of lists,
 * relists, watches opened, errors by phase and reason, events applied, bookmarks, regressions and
 * handler errors; gauges of the time since the last event and bookmark, each handler's backlog, and
 * synced / ready / live / watch connected. Every series has the label `informer` (its name, `v1/pods`).
 *
 * Errors by reason come from the `reflectorError` diagnostics channel, matched on the informer's name:
 * two factories with informers of the same name add up, unless each names its cluster (the factory's
 * option `cluster`: `east/v1/pods`, as the `MultiClusterManager`'s factories do). Call `close()` to stop listening.
 *
 * ```ts
 * import * as promClient from 'prom-client';
 * registerInformerMetrics(promClient, factory);
 * ```
 */
export function registerInformerMetrics(promClient: PromCollectorClientLike, source: InformerHealthSource, options: InformerMetricsOptions = {}): InformerMetricsRegistration {
  validateOptions('registerInformerMetrics', options, { registry: 'object', prefix: 'string', audits: 'any', rings: 'any', multiCluster: 'object' });
  const registry = options.registry ?? promClient.register;
  const prefix = options.prefix ?? '';
  const errorCounts = new Map<string, { informer: string; phase: string; reason: string; n: number }>();
  const onError = (message: unknown): void => {
    const m = message as { name?: unknown; phase?: unknown; error?: unknown };
    const informer = typeof m.name === 'string' ? m.name : '';
    const phase = typeof m.phase === 'string' ? m.phase : 'unknown';
    const reason = reasonOf(m.error);
    const key = `${informer}\u0000${phase}\u0000${reason}`;
    const entry = errorCounts.get(key) ?? { informer, phase, reason, n: 0 };
    entry.n++;
    errorCounts.set(key, entry);
  };
  diagnosticsChannel.subscribe(channelNames.reflectorError, onError);

  const define = (kind: 'Gauge' | 'Counter', name: string, help: string, labelNames: string[], fill: (metric: CollectedMetric, all: InformerHealth[]) => void): void => {
    if (registry.getSingleMetric(prefix + name) !== undefined) return;
    new promClient[kind]({
      name: prefix + name,
      help,
      labelNames,
      registers: [registry],
      collect(this: CollectedMetric) {
        this.reset();
        fill(this, healthOf(source));
      },
    });
  };
  const counter = (name: string, help: string, pick: (h: InformerHealth) => number): void =>
    define('Counter', name, help, ['informer'], (m, all) => all.forEach((h) => m.labels(h.name).inc(pick(h))));
  const gauge = (name: string, help: string, pick: (h: InformerHealth) => number | undefined): void =>
    define('Gauge', name, help, ['informer'], (m, all) =>
      all.forEach((h) => {
        const v = pick(h);
        if (v !== undefined) m.labels(h.name).set(v);
      }),
    );
  const n = informerMetricNames;
  counter(n.lists, 'Lists completed and handed to the cache (paged or streamed), the first one included.', (h) => h.counters.lists);
  counter(n.relists, 'Lists completed after the first.', (h) => h.counters.relists);
  counter(n.watches, 'Watch streams opened.', (h) => h.counters.watches);
  counter(n.events, 'ADDED, MODIFIED and DELETED events applied to the cache.', (h) => h.counters.events);
  counter(n.bookmarks, 'BOOKMARK events received.', (h) => h.counters.bookmarks);
  counter(n.regressions, 'Events or lists whose resource version went backwards.', (h) => h.counters.regressions);
  counter(n.handlerErrors, 'Handler callbacks that threw or rejected.', (h) => h.counters.handlerErrors);
  define('Counter', n.errors, 'Errors the reflector reported (failed requests, warnings, skipped events), by phase and reason.', ['informer', 'phase', 'reason'], (m) => {
    for (const e of errorCounts.values()) m.labels(e.informer, e.phase, e.reason).inc(e.n);
  });
  const seconds = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : ms / 1000);
  gauge(n.lastEventAge, 'Seconds since the last watch event, bookmarks included.', (h) => seconds(h.watch.msSinceLastEvent));
  gauge(n.lastBookmarkAge, 'Seconds since the last bookmark.', (h) => seconds(h.watch.msSinceLastBookmark));
  gauge(n.synced, '1 when the cache is synced.', (h) => Number(h.synced));
  gauge(n.ready, '1 when the informer is ready (synced, cache not known stale, watch not stalled or disconnected, no slow handler).', (h) => Number(h.ready));
  gauge(n.live, '1 when the informer is live (not failed or stopped, no wedged handler).', (h) => Number(h.live));
  gauge(n.watchConnected, '1 while a watch is open.', (h) => Number(h.watch.connected));
  define('Gauge', n.handlerBacklog, 'Notifications buffered and not yet delivered to a handler.', ['informer', 'handler'], (m, all) => {
    for (const h of all) for (const handler of h.handlers) m.labels(h.name, handler.name).set(handler.backlog);
  });
  const audits = options.audits ?? [];
  if (audits.length > 0) {
    const each = (fill: (m: CollectedMetric, a: HasDriftAuditStats, stats: DriftAuditStats) => void) => (m: CollectedMetric) =>
      audits.forEach((a) => fill(m, a, a.stats()));
    define('Counter', n.driftAudits, 'Drift audits done, by result: clean, divergent (the cache differed from the server), failed (the list failed).', ['informer', 'result'], each((m, a, s) => {
      for (const result of ['clean', 'divergent', 'failed'] as const) m.labels(a.informer, result).inc(s.audits[result]);
    }));
    define('Gauge', n.driftObjects, 'Keys in which the cache differed from the server at the last drift audit, by kind: missing, extra, stale.', ['informer', 'kind'], each((m, a, s) => {
      if (s.last !== undefined) for (const kind of ['missing', 'extra', 'stale'] as const) m.labels(a.informer, kind).set(s.last[kind]);
    }));
    define('Counter', n.driftRepairs, 'Relists a drift audit did to repair the cache.', ['informer'], each((m, a, s) => m.labels(a.informer).inc(s.repairs)));
    define('Gauge', n.driftDuration, 'How long the last drift audit took, in seconds.', ['informer'], each((m, a, s) => {
      if (s.last !== undefined) m.labels(a.informer).set(s.last.durationMs / 1000);
    }));
    define('Gauge', n.driftLastAudit, 'When the last drift audit ended, in seconds since the epoch.', ['informer'], each((m, a, s) => {
      if (s.last !== undefined) m.labels(a.informer).set(s.last.at / 1000);
    }));
  }
  const rings = options.rings ?? [];
  if (rings.length > 0) {
    const ring = (name: string, help: string, pick: (h: ShardRingHealth) => number | undefined): void =>
      define('Gauge', name, help, ['ring', 'identity'], (m) => {
        for (const r of rings) {
          const h = r.health();
          const v = pick(h);
          if (v !== undefined) m.labels(h.name, h.identity).set(v);
        }
      });
    ring(n.shardSlotsOwned, 'Slots of the shard ring this replica owns.', (h) => h.owned.length);
    ring(n.shardPendingHandovers, 'Slots of the shard ring being handed over (draining, claimed or released).', (h) => h.pendingHandovers.length);
    ring(n.shardMembers, 'Live members of the shard ring this replica sees, itself included.', (h) => h.members.length);
    ring(n.shardLastRebalanceAge, 'Seconds since the owned slots last changed.', (h) => seconds(h.msSinceLastRebalance));
    ring(n.shardReadFailures, 'Reads of the shard ring that failed in a row.', (h) => h.failuresInARow);
  }
  const fleet = options.multiCluster;
  if (fleet !== undefined) {
    define('Gauge', n.multiClusterClusters, 'Clusters engaged now, by state: ready (every informer ready) or unready.', ['state'], (m) => {
      const clusters = fleet.readiness().clusters;
      const ready = clusters.filter((c) => c.ready).length;
      m.labels('ready').set(ready);
      m.labels('unready').set(clusters.length - ready);
    });
    define('Gauge', n.multiClusterClusterReady, '1 when every informer of the engaged cluster is ready, 0 when not.', ['cluster'], (m) => {
      for (const c of fleet.readiness().clusters) m.labels(c.name).set(Number(c.ready));
    });
    define('Gauge', n.multiClusterProviderReady, '1 when the cluster provider watches its source (its informers ready), or has none.', ['provider'], (m) => {
      for (const p of fleet.readiness().providers) m.labels(p.name).set(Number(p.ready));
    });
    define('Counter', n.multiClusterEngages, 'Clusters engaged, re-engages included.', [], (m) => m.labels().inc(fleet.stats().engages));
    define('Counter', n.multiClusterDisengages, 'Clusters disengaged, re-engages included.', [], (m) => m.labels().inc(fleet.stats().disengages));
    define('Counter', n.multiClusterRefused, 'Inputs the cluster providers refused, by reason.', ['reason'], (m) => {
      for (const [reason, count] of Object.entries(fleet.stats().refusedByReason)) m.labels(reason).inc(count);
    });
  }
  return { close: () => diagnosticsChannel.unsubscribe(channelNames.reflectorError, onError) };
}
