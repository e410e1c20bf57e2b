// Controllers that reconcile only while this process leads: one election, a term per leadership, drained on loss.

import { resolveLogger, withFields, type LoggerOption } from '../core/log.js';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import { LEADER_ELECTOR_OPTION_SCHEMA, LeaderElector, type LeaderElectorOptions } from '../leaderelection/elector.js';
import { RunGroup, type Runnable } from '../runtime/run-group.js';

export type { Runnable } from '../runtime/run-group.js';

/** Options of {@link runWhileLeading}: the {@link LeaderElector}'s, without its callbacks, plus a logger. */
export interface RunWhileLeadingOptions extends Omit<LeaderElectorOptions, 'onStartedLeading' | 'onStoppedLeading'> {
  /** Where the terms are logged (started, lost, competing again); `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

const { onStartedLeading: _started, onStoppedLeading: _stopped, ...electorRules } = LEADER_ELECTOR_OPTION_SCHEMA;
/** The rules of {@link RunWhileLeadingOptions} (the Manager checks its `leaderElection` option with them). */
export const RUN_WHILE_LEADING_OPTION_SCHEMA = { ...electorRules, logger: 'logger' } as const satisfies OptionSchemaFor<RunWhileLeadingOptions>;

/**
 * Runs `controllers` (each a `Controller`, or any {@link Runnable}) only while this process holds the lock: each time it becomes leader, every
 * controller runs with a signal that aborts when the term ends; when the lease is lost (or renewing
 * fails for `renewDeadlineMs`), the controllers stop starting reconciles at once, running reconciles
 * see their signal abort, and the term ends only once every one of them returned — so the next leader
 * never overlaps with this one's in-flight work as far as this process can tell. Then it competes
 * again, with a new elector, until `signal` aborts. The informers keep running between terms (a warm
 * standby): start the factory with the process's signal, not the term's.
 *
 * Resolves once `signal` aborted and the current term (if any) drained; rejects when a controller
 * rejects (an informer failed, a cache cannot sync) — the other controllers of the term are stopped
 * first — with the elector's `LeaderElectionError` (reason `callback-failed`) whose `cause` is the
 * controller's error.
 *
 * Warning: leader election bounds overlap by time, not by proof. A term ends `renewDeadlineMs` after
 * the last successful renewal at the latest, and another candidate takes over `leaseDurationMs` after
 * it last saw the record change; keep `reconcileTimeoutMs` and your reconciles' own requests shorter
 * than `leaseDurationMs − renewDeadlineMs` (5 s with the defaults) if overlapping writes would hurt.
 *
 * @example
 * ```ts
 * factory.start(signal);
 * await runWhileLeading([controller], { lock: new LeaseLock(api, 'ns', 'my-operator', podName) }, signal);
 * ```
 */
export async function runWhileLeading(
  controllers: readonly Runnable[],
  options: RunWhileLeadingOptions,
  signal: AbortSignal,
): Promise<void> {
  validateOptions('runWhileLeading', options, RUN_WHILE_LEADING_OPTION_SCHEMA);
  const { logger, ...electorOptions } = options;
  const log = withFields(resolveLogger(logger), { component: 'leader-election', lock: electorOptions.lock.describe() });
  const names = controllers.map((c) => c.name).join(', ');
  let terms = 0;
  while (!signal.aborted) {
    const elector = new LeaderElector({
      ...electorOptions,
      logger,
      onStartedLeading: async (term) => {
        terms++;
        log.info(`leading (term ${terms}): running controllers ${names}`);
        await RunGroup.run(controllers, term, { name: `term ${terms}`, logger });
      },
    });
    await elector.run(signal);
    if (!signal.aborted && terms > 0) log.warn(`leadership lost: controllers ${names} stopped; competing again`);
  }
}
