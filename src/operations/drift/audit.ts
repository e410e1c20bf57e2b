// The live drift audit: every so often, a metadata-only list of the watched resource diffed against the informer's cache.

import type { HasPermissions, Permission } from '../../core/permissions.js';
import { callWithTimeout, TIMED_OUT, ABORTED } from '../../core/abort.js';
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { AbortedError, AlreadyStartedError } from '../../core/errors.js';
import { NetworkError } from '../../listwatch/errors.js';
import { metaNamespaceKeyFunc } from '../../core/keys.js';
import { errorFields, formatDuration, resolveLogger, withFields, type Logger } from '../../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../../core/options.js';
import { newListWatch } from '../../listwatch/list-watch.js';
import type { ListerWatcher } from '../../listwatch/types.js';
import { defaultRandom, jitteredAround, type RandomSource } from '../../runtime/backoff.js';
import { countByKind, describeDivergences, diffAgainstCache, type CacheView, type Divergence } from './diff.js';
import type { AuditedInformer, DriftAuditOptions, DriftAuditStats, DriftReport } from './types.js';

const OWNER = 'DriftAudit';
/** How many divergent keys a log line names. */
const LOGGED_KEYS = 10;

/**
 * Checks, while it runs, that an informer's cache equals the server: every `intervalMs` it lists the
 * resource metadata-only (names and resource versions, a consistent read from etcd) and compares the
 * list with the cache, using the list's resource version as the cut — a key changed after the list
 * does not count, and a difference is confirmed only once the cache has applied every change up to
 * that version. What it finds is a {@link DriftReport}: kept as {@link DriftAudit.lastReport}, counted
 * in {@link DriftAudit.stats} (and the `kube_informer_drift_*` metrics), and logged — a warning naming
 * up to 10 divergent keys. With `repair`, a divergent cache is relisted (`informer.relist()`).
 *
 * A watch delivers every change in order, so a healthy informer never diverges; this turns "resync and
 * hope" into a measured figure, and would have named the keys of kubernetes #58545 (a stale DELETE
 * replayed) as they went wrong. Its cost is one paginated metadata list per interval: see
 * docs/operations.md for the figure at 100 000 objects.
 *
 * Warning: the audit's list must see what the informer sees: give it the same `namespace` and
 * selectors, or its own `listWatch`. Keys the informer filters out would all be `missing`.
 *
 * It is a `Runnable`: pass it to a `Manager`'s `runnables`, or call `run(signal)` yourself.
 *
 * @example
 * ```ts
 * const pods = factory.forResource(resources.pods);
 * const audit = new DriftAudit(kubeConfig, pods, { resource: resources.pods, intervalMs: 10 * 60_000 });
 * await new Manager(factory, { controllers, runnables: [audit] }).run(signal);
 * ```
 */
export class DriftAudit implements HasPermissions {
  /** `drift-audit:<informer>`: its name as a `Runnable` and in log lines. */
  readonly name: string;
  /** The audited informer's name (`v1/pods`): the `informer` label of its metrics. */
  readonly informer: string;
  readonly #informer: AuditedInformer;
  readonly #lw: ListerWatcher<unknown>;
  readonly #ownsLw: boolean;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #jitter: number;
  readonly #settleTimeoutMs: number;
  readonly #listTimeoutMs: number;
  readonly #pageSize: number;
  readonly #repair: boolean;
  readonly #permissions: Permission[];
  readonly #stats = { clean: 0, divergent: 0, failed: 0, repairs: 0 };
  #last: DriftReport | undefined;
  #started = false;

  /**
   * An audit of `informer`'s cache against `kubeConfig`'s cluster. Throws `INVALID_OPTION` for a bad
   * option, or when neither `resource` nor `listWatch` says what to list.
   */
  constructor(kubeConfig: Parameters<typeof newListWatch>[0] | undefined, informer: AuditedInformer, options: DriftAuditOptions) {
    validateOptions(OWNER, options, {
      resource: 'object',
      namespace: 'string',
      labelSelector: 'labelSelector',
      fieldSelector: 'fieldSelector',
      listWatch: 'object',
      intervalMs: 'positiveDuration',
      jitter: 'any', // checked below: a fraction in [0, 1)
      settleTimeoutMs: 'positiveDuration',
      listTimeoutMs: 'positiveDuration',
      pageSize: 'positiveCount',
      repair: 'boolean',
      clock: 'clock',
      random: 'function',
      logger: 'logger',
    });
    const jitter: unknown = options.jitter;
    if (jitter !== undefined && !(typeof jitter === 'number' && jitter >= 0 && jitter < 1)) {
      throw new InvalidOptionError(`${OWNER}: option jitter must be a number in [0, 1), got ${describeValue(jitter)}`);
    }
    if (options.listWatch === undefined && (options.resource === undefined || kubeConfig === undefined)) {
      throw new InvalidOptionError(`${OWNER}: give the resource to list (option resource, with a kubeConfig) or option listWatch`);
    }
    this.name = `drift-audit:${informer.name}`;
    this.informer = informer.name;
    this.#informer = informer;
    this.#ownsLw = options.listWatch === undefined;
    this.#lw =
      options.listWatch ??
      newListWatch(kubeConfig as Parameters<typeof newListWatch>[0], options.resource as NonNullable<DriftAuditOptions['resource']>, {
        namespace: options.namespace,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        metadataOnly: true,
        userAgent: 'kube-informer-drift-audit',
      });
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? defaultRandom;
    this.#log = withFields(resolveLogger(options.logger), { component: 'drift-audit', name: this.name });
    this.#intervalMs = options.intervalMs ?? 600_000;
    this.#jitter = options.jitter ?? 0.1;
    this.#settleTimeoutMs = options.settleTimeoutMs ?? 90_000;
    this.#listTimeoutMs = options.listTimeoutMs ?? 120_000;
    this.#pageSize = options.pageSize ?? 500;
    this.#repair = options.repair ?? false;
    const r = options.resource;
    this.#permissions =
      options.listWatch !== undefined || r === undefined
        ? []
        : [{ group: r.group, resource: r.resource, verbs: ['list'], reason: `drift audit of ${this.informer}`, ...(options.namespace === undefined || options.namespace === '' || (r as { namespaced?: boolean }).namespaced === false ? {} : { namespace: options.namespace }) }];
  }

  /**
   * What the audit needs (see `HasPermissions`): `list` of `resource` in its `namespace` (every
   * namespace without one); nothing with option `listWatch` (its requests are that ListerWatcher's).
   */
  permissions(): Permission[] {
    return this.#permissions.map((p) => ({ ...p }));
  }

  /** The last completed audit's report; `undefined` before the first. */
  get lastReport(): DriftReport | undefined {
    return this.#last;
  }

  /** Counters since creation (see {@link DriftAuditStats}). */
  stats(): DriftAuditStats {
    return { audits: { clean: this.#stats.clean, divergent: this.#stats.divergent, failed: this.#stats.failed }, repairs: this.#stats.repairs, last: this.#last };
  }

  /**
   * Waits for the informer's cache to sync, then audits every `intervalMs` (± `jitter`) until `signal`
   * aborts or the informer stops; then resolves. An audit that fails (the list failed) is logged and
   * counted, and the next one runs on time: `run` never rejects for it. Rejects with `ALREADY_STARTED`
   * when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(OWNER);
    this.#started = true;
    try {
      await this.#informer.whenSynced(signal).catch(() => undefined);
      while (!signal.aborted && !this.#informer.isStopped()) {
        const delay = jitteredAround(this.#intervalMs, this.#jitter, this.#random);
        if (!(await sleep(this.#clock, delay, signal))) break;
        if (this.#informer.isStopped()) break;
        await this.audit(signal).catch((err: unknown) => {
          if (!signal.aborted && !this.#informer.isStopped()) this.#log.warn(`${this.name}: the audit failed: ${err instanceof Error ? err.message : String(err)}`, errorFields(err));
        });
      }
    } finally {
      if (this.#ownsLw) (this.#lw as { close?: () => void }).close?.();
    }
  }

  /**
   * One audit now (see the class): resolves with its report, after the repair when `repair` is on.
   * Rejects when the list fails (`API_STATUS`, `NETWORK`; counted as a failed audit), with `ABORTED`
   * when `signal` aborts, and with `INFORMER_STOPPED` on a stopped informer.
   */
  async audit(signal?: AbortSignal): Promise<DriftReport> {
    const started = this.#clock.now();
    const stop = signal ?? new AbortController().signal;
    try {
      await this.#informer.whenSynced(stop);
      const first = await this.#list(stop);
      let suspects = diffAgainstCache(first.items, first.resourceVersion, this.#view());
      let caughtUp = true;
      if (suspects.length > 0) {
        // Look again once the cache has applied everything up to the list: what was only in flight is gone.
        caughtUp = await this.#settle(first.resourceVersion, stop);
        suspects = diffAgainstCache(first.items, first.resourceVersion, this.#view(), suspects.map((d) => d.key));
      }
      const absent = suspects.filter((d) => d.kind === 'missing');
      if (caughtUp && absent.length > 0) {
        // Listed, and not in the cache even now: deleted since (fine), or an ADDED the cache never got.
        const second = await this.#list(stop);
        caughtUp = await this.#settle(second.resourceVersion, stop);
        const still = new Set(diffAgainstCache(second.items, second.resourceVersion, this.#view(), absent.map((d) => d.key)).map((d) => d.key));
        suspects = suspects.filter((d) => d.kind !== 'missing' || still.has(d.key));
      }
      const report = this.#report(first, suspects, caughtUp, started);
      if (report.divergent === 0 || !this.#repair) return report;
      await this.#informer.relist(stop);
      this.#stats.repairs++;
      this.#last = { ...report, repaired: true };
      this.#log.info(`${this.name}: relisted; the cache was replaced by a consistent list`);
      return this.#last;
    } catch (err) {
      if (!stop.aborted && !this.#informer.isStopped()) this.#stats.failed++;
      throw err;
    }
  }

  #view(): CacheView {
    const indexer = this.#informer.getIndexer();
    return {
      keys: () => indexer.listKeys(),
      versionOf: (key) => {
        const obj = indexer.getByKey(key) as { metadata?: { resourceVersion?: string } } | undefined;
        return obj === undefined ? undefined : (obj.metadata?.resourceVersion ?? '');
      },
    };
  }

  /** Waits (at most `settleTimeoutMs`) for the cache to reach `rv`; false when it did not. */
  async #settle(rv: string, signal: AbortSignal): Promise<boolean> {
    if (rv === '') return false;
    const wait = await callWithTimeout(this.#clock, this.#settleTimeoutMs, signal, (s) => this.#informer.awaitResourceVersion(rv, s).then(() => true as const));
    if (wait === ABORTED) throw new AbortedError(`${this.name}: the audit was aborted`, { cause: signal.reason });
    return wait !== TIMED_OUT;
  }

  /** A consistent, paginated, metadata-only list: key → resource version, and the list's version. */
  async #list(signal: AbortSignal): Promise<{ items: Map<string, string>; resourceVersion: string }> {
    const items = new Map<string, string>();
    let resourceVersion = '';
    let token: string | undefined;
    do {
      const options = token === undefined ? { resourceVersion: '', limit: this.#pageSize } : { continue: token, limit: this.#pageSize };
      const page = await callWithTimeout(this.#clock, this.#listTimeoutMs, signal, (s) => this.#lw.list(options, s));
      if (page === ABORTED) throw new AbortedError(`${this.name}: the audit was aborted`, { cause: signal.reason });
      if (page === TIMED_OUT) throw new NetworkError(`${this.name}: a list page got no answer within ${formatDuration(this.#listTimeoutMs)} (listTimeoutMs)`);
      if (token === undefined) resourceVersion = page.metadata.resourceVersion ?? '';
      for (const item of page.items ?? []) {
        items.set(metaNamespaceKeyFunc(item), (item as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '');
      }
      token = page.metadata.continue === '' ? undefined : page.metadata.continue;
    } while (token !== undefined);
    return { items, resourceVersion };
  }

  #report(list: { items: Map<string, string>; resourceVersion: string }, divergences: Divergence[], caughtUp: boolean, started: number): DriftReport {
    const counts = countByKind(divergences);
    const report: DriftReport = {
      informer: this.#informer.name,
      listResourceVersion: list.resourceVersion,
      listed: list.items.size,
      cached: this.#informer.getIndexer().listKeys().length,
      divergent: divergences.length,
      ...counts,
      divergences: divergences.slice(0, 100),
      caughtUp,
      durationMs: this.#clock.now() - started,
      repaired: false,
      at: this.#clock.now(),
    };
    this.#last = report;
    if (report.divergent === 0) {
      this.#stats.clean++;
      this.#log.debug(`${this.name}: the cache equals the server at resource version ${report.listResourceVersion} (${report.listed} objects, ${formatDuration(report.durationMs)})`);
    } else {
      this.#stats.divergent++;
      const lag = caughtUp ? '' : `; the cache did not reach the list's resource version within ${formatDuration(this.#settleTimeoutMs)} (is the watch stalled?)`;
      const next = this.#repair ? '; repairing with a relist' : '; set repair: true to relist';
      this.#log.warn(
        `${this.name}: the cache differs from the server at resource version ${report.listResourceVersion}: ${report.divergent} of ${report.listed} objects ` +
          `(missing ${report.missing}, extra ${report.extra}, stale ${report.stale}): ${describeDivergences(divergences, LOGGED_KEYS)}${lag}${next}`,
      );
    }
    return report;
  }
}
