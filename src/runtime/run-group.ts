// The runnable group: named runnables started together in stages on TaskScope, the first failure stops them all, stages stop in reverse order within one grace.

import { realClock, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { formatDuration, resolveLogger, type Logger, type LoggerOption } from '../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import { TaskScope } from '../core/task-scope.js';

/**
 * Something that runs until its signal aborts: a `Controller`, an `EventRecorder`, a `DriftAudit`, a
 * `ShardRing`, or your own. `run` resolves after a clean stop and rejects on a failure it cannot
 * recover from.
 */
export interface Runnable {
  /** Its name in log lines and errors. */
  readonly name: string;
  /** Runs until `signal` aborts; rejects on a failure it cannot recover from. */
  run(signal: AbortSignal): Promise<void>;
}

/** Options of a {@link RunGroup}. */
export interface RunGroupOptions {
  /** The group's name in errors and log lines. Default `'run group'`. */
  name?: string;
  /** The group stops when this signal aborts. Default: none (it stops on `stop()` or a failure). */
  signal?: AbortSignal;
  /**
   * The stages, in start order; they stop in the reverse order, each once the one after it has ended
   * (e.g. `['informers', 'runnables', 'controllers']`: reconciles drain before the runnables stop,
   * the informers stop last). Default `['main']`: one stage.
   */
  stages?: readonly string[];
  /**
   * How long stopping may take in all, in ms, from the moment the group's signal aborted; runnables
   * still running then are abandoned (named in a warning and in the result). `Infinity` waits for every
   * runnable. Default `Infinity`.
   */
  graceMs?: number;
  /** The clock the grace period is timed on. Default `realClock`. */
  clock?: Clock;
  /** Where failures after the first and abandoned runnables are reported; `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/** What {@link RunGroup.closed} resolves with after a stop without a failure. */
export interface RunGroupResult {
  /** The runnables still running when the grace period ran out (not waited for). Empty after a clean stop. */
  readonly abandoned: readonly string[];
}

/**
 * A group of runnables with one lifetime, built on `TaskScope` (controller-runtime's runnable group,
 * Go's `errgroup`). Runnables are started into stages with {@link RunGroup.start}; each gets a signal
 * of its stage. The group stops when its `signal` aborts, on {@link RunGroup.stop}, or on the first
 * failure (a runnable that rejects or throws, or {@link RunGroup.fail}); then the stages stop one
 * after the other in reverse start order — each stage's signal aborts (with the group's reason) only
 * once the later stages have ended — within `graceMs` in all. {@link RunGroup.closed} settles once
 * every stage has ended: it rejects with the first failure, else resolves with the abandoned runnables.
 * A runnable that ends before the stop does not stop the group. Nothing is left running unless the
 * grace period abandoned it, and no timer or listener is left behind.
 *
 * Recovery: a group runs once; to run again (a new leadership term), create a new group.
 *
 * Warning: a runnable that ignores its signal keeps an `Infinity`-grace group from closing; with a
 * finite grace it is abandoned (named in a warning) and keeps running — a failure it reports later is
 * logged, not thrown.
 *
 * @example
 * ```ts
 * const group = new RunGroup({ name: 'manager', signal, stages: ['informers', 'controllers'] });
 * group.start({ name: 'informers', run: (s) => factory.run(s) }, 'informers');
 * group.start(controller, 'controllers');
 * await group.closed(); // after `signal` aborted and everything stopped, or rejects with the first failure
 * ```
 */
export class RunGroup {
  /** The group's name. */
  readonly name: string;
  readonly #main: TaskScope;
  readonly #stages: ReadonlyMap<string, TaskScope>;
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #log: Logger;
  #abandoned: readonly string[] = [];

  /** Throws `INVALID_OPTION` for a bad option (a `graceMs` below 0, no stage or a stage named twice). */
  constructor(options: RunGroupOptions = {}) {
    validateOptions('RunGroup', options, { name: 'string', signal: 'object', stages: 'any', graceMs: 'any', clock: 'clock', logger: 'logger' }); // stages and graceMs: below
    this.name = options.name ?? 'run group';
    const graceMs: unknown = options.graceMs ?? Infinity;
    if (typeof graceMs !== 'number' || !(graceMs >= 0)) {
      throw new InvalidOptionError(`${this.name}: option graceMs must be a number of milliseconds >= 0 (Infinity waits for every runnable), got ${describeValue(graceMs)}`);
    }
    const stages: unknown = options.stages ?? ['main'];
    if (!Array.isArray(stages) || stages.length === 0 || !stages.every((s) => typeof s === 'string') || new Set(stages).size !== stages.length) {
      throw new InvalidOptionError(`${this.name}: option stages must be a non-empty array of distinct names, got ${describeValue(stages)}`);
    }
    this.#graceMs = graceMs;
    this.#clock = options.clock ?? realClock;
    this.#log = resolveLogger(options.logger);
    const late = (err: Error, task: string): void => this.#log.warn(`${this.name}: ${task} failed after the first failure: ${err.message}`);
    this.#main = new TaskScope({ name: this.name, clock: this.#clock, onLateFailure: late });
    this.#stages = new Map(
      stages.map((stage) => [stage, new TaskScope({ name: `${this.name} ${stage}`, clock: this.#clock, onFailure: (err, task) => this.fail(err, task), onLateFailure: late })]),
    );
    void this.#main.spawn('stop in order', (signal) => this.#stopInOrder(signal));
    if (options.signal !== undefined) this.#main.link(options.signal);
  }

  /** Aborts when the group starts stopping: its `signal` aborted, `stop()`, or the first failure (the reason). */
  get signal(): AbortSignal {
    return this.#main.signal;
  }

  /** The first failure, once there is one. */
  get failure(): Error | undefined {
    return this.#main.failure;
  }

  /** The names of the runnables running now. */
  running(): string[] {
    return [...this.#stages.values()].flatMap((s) => s.running());
  }

  /**
   * Starts `runnable` in `stage` (default: the first stage) with the stage's signal; a rejection or
   * throw is a failure of the group. A runnable started while the group stops gets an aborted signal
   * and is waited for like the others. Throws `INVALID_OPTION` for an unknown stage and `ABORTED` once
   * the stage has ended (the runnable is not started).
   */
  start(runnable: Runnable, stage?: string): void {
    const scope = stage === undefined ? this.#stages.values().next().value : this.#stages.get(stage);
    if (scope === undefined) throw new InvalidOptionError(`${this.name}: no stage ${describeValue(stage)} (stages: ${[...this.#stages.keys()].join(', ')})`);
    void scope.spawn(runnable.name, (signal) => runnable.run(signal));
  }

  /** Records a failure as if the runnable `name` failed: the first one stops the group and is what `closed()` rejects with. */
  fail(error: unknown, name = this.name): void {
    this.#main.fail(error, name);
  }

  /** Stops the group without a failure (harmless once stopping). */
  stop(reason?: unknown): void {
    this.#main.abort(reason ?? new AbortedError(`${this.name} was stopped`));
  }

  /**
   * Waits until every stage has ended (after the group's signal aborted): rejects with the first
   * failure, else resolves with the runnables the grace period abandoned. Does not stop the group.
   */
  async closed(): Promise<RunGroupResult> {
    await this.#main.closed();
    return { abandoned: this.#abandoned };
  }

  /**
   * Runs `runnables` together in one stage until `signal` aborts; the first to reject stops the others
   * and is what this rejects with, once all have ended.
   */
  static async run(runnables: readonly Runnable[], signal: AbortSignal, options: Omit<RunGroupOptions, 'signal' | 'stages'> = {}): Promise<void> {
    const group = new RunGroup({ ...options, signal });
    for (const runnable of runnables) group.start(runnable);
    await group.closed();
  }

  /** The group's one task: once its signal aborts, ends the stages last to first within the grace. */
  async #stopInOrder(signal: AbortSignal): Promise<void> {
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    const deadline = this.#clock.now() + this.#graceMs;
    const abandoned: string[] = [];
    for (const stage of [...this.#stages.values()].reverse()) {
      stage.abort(signal.reason);
      const left = this.#graceMs === Infinity ? Infinity : Math.max(0, deadline - this.#clock.now());
      // A stage's failure already reached the group through onFailure.
      const result = await stage.close(left).catch(() => ({ abandoned: stage.abandoned }));
      abandoned.push(...result.abandoned);
    }
    this.#abandoned = Object.freeze(abandoned);
    if (abandoned.length > 0) {
      this.#log.warn(`${this.name}: stopped with ${abandoned.join(', ')} still running after ${formatDuration(this.#graceMs)} (graceMs); they were abandoned`);
    }
  }
}

