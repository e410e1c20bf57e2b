// Controller metrics: the provider interface (controller-runtime's metrics, by name) and the per-run recorder.

import type { Clock } from '../core/clock.js';
import type { CounterMetric, HistogramMetric, SettableGaugeMetric, WorkQueueMetricsProvider } from '../observability/index.js';
import type { Action } from './scheduler.js';

/** How a reconcile ended, as controller-runtime's `controller_runtime_reconcile_total` labels it. */
export type ReconcileResult = 'success' | 'requeue_after' | 'error';

/**
 * How one reconcile ended, for {@link ControllerMetrics.ended}: its action, a failure (`error`), a
 * `TerminalError` (`terminal`: an error that is not retried), or `stopped` (interrupted by the
 * controller's stop: no result counted).
 */
type ReconcileEnd = Action | 'error' | 'terminal' | 'stopped';

/**
 * Creates the metrics of one controller (its `name`); each method is called once per run of the
 * controller. Mirrors controller-runtime's metrics so existing dashboards work:
 *
 * - reconcileTotal(result): reconciles that ended, by result — `success` (done or await), `requeue_after`,
 *   `error` (threw, or passed its deadline); a reconcile interrupted by the controller's stop is not
 *   counted;
 * - reconcileErrors: reconciles that failed (a `TerminalError` included);
 * - terminalReconcileErrors: reconciles that failed with a `TerminalError` (not retried);
 * - reconcileTime: seconds from the start of a reconcile (after its wait for recorded writes) to its end;
 * - activeWorkers: reconciles running now;
 * - maxConcurrentReconciles: the `concurrency` option.
 *
 * `workQueue`, when given, receives the controller's scheduler as a work queue named after the
 * controller: depth (keys due and waiting), adds, queue latency (from the request, or from the due
 * time of a delayed one, to the start), work duration, unfinished work, longest running reconcile and
 * retries (each `requeueAfter` and each backoff after a failure).
 */
export interface ControllerMetricsProvider {
  /** The counter of reconciles of `controller` that ended with `result`. */
  newReconcileTotalMetric(controller: string, result: ReconcileResult): CounterMetric;
  /** The counter of failed reconciles of `controller`. */
  newReconcileErrorsMetric(controller: string): CounterMetric;
  /**
   * The counter of reconciles of `controller` that failed with a `TerminalError`
   * (`controller_runtime_terminal_reconcile_errors_total`). Optional: without it they count in
   * `newReconcileErrorsMetric` only.
   */
  newTerminalReconcileErrorsMetric?(controller: string): CounterMetric;
  /** The reconcile-time histogram (seconds) of `controller`. */
  newReconcileTimeMetric(controller: string): HistogramMetric;
  /** The gauge of running reconciles of `controller`. */
  newActiveWorkersMetric(controller: string): SettableGaugeMetric;
  /** The gauge of the concurrency cap of `controller`. */
  newMaxConcurrentReconcilesMetric(controller: string): SettableGaugeMetric;
  /** The work-queue metrics of the controller's scheduler. Default: none. */
  readonly workQueue?: WorkQueueMetricsProvider;
}

/** Records one controller run's metrics (the scheduler records its queue metrics). Without a provider every method is a no-op. */
export class ControllerMetrics {
  readonly #clock: Clock;
  readonly #total: Record<ReconcileResult, CounterMetric> | undefined;
  readonly #errors: CounterMetric | undefined;
  readonly #terminal: CounterMetric | undefined;
  readonly #time: HistogramMetric | undefined;
  readonly #active: SettableGaugeMetric | undefined;
  #running = 0;

  /** The metrics of controller `name`, whose cap is `concurrency`. */
  constructor(name: string, concurrency: number, clock: Clock, provider: ControllerMetricsProvider | undefined) {
    this.#clock = clock;
    if (provider === undefined) return;
    this.#total = {
      success: provider.newReconcileTotalMetric(name, 'success'),
      requeue_after: provider.newReconcileTotalMetric(name, 'requeue_after'),
      error: provider.newReconcileTotalMetric(name, 'error'),
    };
    this.#errors = provider.newReconcileErrorsMetric(name);
    this.#terminal = provider.newTerminalReconcileErrorsMetric?.(name);
    this.#time = provider.newReconcileTimeMetric(name);
    this.#active = provider.newActiveWorkersMetric(name);
    provider.newMaxConcurrentReconcilesMetric(name).set(concurrency);
    this.#active.set(0);
  }

  /** A reconcile starts; returns the clock time to give {@link ended}. */
  started(): number {
    if (this.#total === undefined) return 0;
    this.#active?.set(++this.#running);
    return this.#clock.now();
  }

  /** A reconcile that started at `startedAt` ended as `end` says. */
  ended(startedAt: number, end: ReconcileEnd): void {
    if (this.#total === undefined) return;
    this.#active?.set(--this.#running);
    if (end === 'stopped') return;
    this.#time?.observe((this.#clock.now() - startedAt) / 1000);
    if (typeof end !== 'string') this.#total[end.kind === 'requeueAfter' ? 'requeue_after' : 'success'].inc();
    else {
      this.#total.error.inc();
      this.#errors?.inc();
      if (end === 'terminal') this.#terminal?.inc();
    }
  }

  /** The run ended: no reconcile is active. */
  close(): void {
    this.#running = 0;
    this.#active?.set(0);
  }
}
