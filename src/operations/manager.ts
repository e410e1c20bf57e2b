// The manager: one call that starts the informers, waits for them, runs the controllers (under leader election if asked), serves probes, and stops it all in order.

import { AlreadyStartedError } from '../core/errors.js';
import { resolveLogger, type Logger, type LoggerOption } from '../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import { RUN_WHILE_LEADING_OPTION_SCHEMA, runTogether, runWhileLeading, type Runnable, type RunWhileLeadingOptions } from '../controller/leader.js';
import type { SharedInformerFactory } from '../informer/factory.js';
import { startProbeServer, type MetricsRegistryLike, type ProbeServer, type ProbeServerOptions } from './probes.js';

/** Options of a {@link Manager}. */
export interface ManagerOptions {
  /** What reconciles: controllers (or any {@link Runnable}) — run only while leading when `leaderElection` is set. Default: none. */
  controllers?: readonly Runnable[];
  /**
   * What runs in every replica, leading or not, once the caches synced (an `EventRecorder`, a drift
   * audit). They stop after the controllers drained, so a draining reconcile's last Event is written. Default: none.
   */
  runnables?: readonly Runnable[];
  /** Run `controllers` only while this process holds the lock (see `runWhileLeading`). Default: no election, they always run. */
  leaderElection?: RunWhileLeadingOptions;
  /**
   * Serve `/livez`, `/readyz` and `/metrics` on a probe server of the manager's own (port, host) for as
   * long as it runs — from before the caches sync (live, not ready) to after everything stopped.
   * Default: no probe server (mount `probeHandler` in yours instead).
   */
  probes?: Pick<ProbeServerOptions, 'port' | 'host'>;
  /** The registry served at `/metrics`. Default: none (404). */
  metrics?: MetricsRegistryLike;
  /** Shard rings reported by `/readyz` (see `ProbeOptions.rings`). Default: none. */
  rings?: ProbeServerOptions['rings'];
  /** Where the manager logs its steps; `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/** Where a {@link Manager} is in its run. */
export type ManagerPhase = 'new' | 'syncing' | 'running' | 'stopping' | 'stopped';

/**
 * Runs a controller process the way controller-runtime's manager does, in one call. `run(signal)`:
 *
 * 1. starts the probe server when `probes` is set (live, not ready yet);
 * 2. starts every informer of the factory and waits for them to sync — rejecting with the reason when
 *    one cannot (a bad selector, missing permissions, an unreachable server: incident 5, never a
 *    silent wait);
 * 3. runs the `runnables`, and the `controllers` (under leader election when `leaderElection` is set);
 * 4. when `signal` aborts, stops in order: no new reconcile starts and the running ones drain, then the
 *    runnables end, then the informers stop, then the probe server closes (incident 4: everything is
 *    released, in order, and `run` resolves only after).
 *
 * It rejects — after the same ordered stop — when something it cannot recover from happens: a cache
 * that cannot sync, an informer that fails (a handler threw: incident 1), a controller or runnable that
 * rejects. A reconcile that fails is not such a thing: the controller retries it.
 *
 * @example
 * ```ts
 * const manager = new Manager(factory, { controllers: [controller], leaderElection: { lock }, probes: { port: 8081 }, metrics: promClient.register });
 * await manager.run(abortOnSigterm);
 * ```
 */
export class Manager {
  readonly #factory: SharedInformerFactory;
  readonly #options: ManagerOptions;
  readonly #log: Logger;
  #phase: ManagerPhase = 'new';
  #leading = false;
  #probeServer: ProbeServer | undefined;

  /** A manager of `factory`'s informers and the given controllers. Throws `INVALID_OPTION` for a bad option. */
  constructor(factory: SharedInformerFactory, options: ManagerOptions = {}) {
    validateOptions('Manager', options, {
      controllers: 'any', // checked below
      runnables: 'any',
      leaderElection: RUN_WHILE_LEADING_OPTION_SCHEMA,
      probes: { port: 'count', host: 'string' },
      metrics: 'object',
      rings: 'any',
      logger: 'logger',
    });
    for (const option of ['controllers', 'runnables'] as const) {
      const list: unknown = options[option] ?? [];
      const ok = Array.isArray(list) && list.every((r: unknown) => typeof (r as Runnable | null)?.run === 'function' && typeof (r as Runnable).name === 'string');
      if (!ok) throw new InvalidOptionError(`Manager: option ${option} must be an array of controllers or runnables (each with a name and run(signal)), got ${describeValue(list)}`);
    }
    this.#factory = factory;
    this.#options = options;
    this.#log = resolveLogger(options.logger);
  }

  /** Where the run is. */
  get phase(): ManagerPhase {
    return this.#phase;
  }

  /** Whether the controllers run now: leading (or no election) and past the sync. */
  isLeading(): boolean {
    return this.#leading;
  }

  /** The probe server's URL while it runs (`probes` set), else `undefined`. */
  get probeUrl(): string | undefined {
    return this.#probeServer?.url;
  }

  /** Runs everything until `signal` aborts (see the class). Rejects with `ALREADY_STARTED` when called twice. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#phase !== 'new') throw new AlreadyStartedError('Manager');
    this.#phase = 'syncing';
    const o = this.#options;
    const failed = new AbortController();
    let failure: { error: unknown } | undefined;
    const fail = (error: unknown): void => {
      failure ??= { error };
      failed.abort(error);
    };
    const runSignal = AbortSignal.any([signal, failed.signal]);
    const onStop = (): void => {
      this.#phase = 'stopping'; // from the stop on, while the reconciles drain: /readyz says not ready
    };
    runSignal.addEventListener('abort', onStop, { once: true });
    const informersStop = new AbortController();
    let informers: Promise<void> | undefined;
    // Runnables stop after the controllers drained, so what a draining reconcile hands them (an Event to write) is not lost.
    const runnablesStop = new AbortController();
    let controllers: Promise<void> = Promise.resolve();
    let runnables: Promise<unknown> = Promise.resolve();
    try {
      if (o.probes !== undefined) {
        this.#probeServer = await startProbeServer({
          ...o.probes,
          informers: this.#factory,
          metrics: o.metrics,
          rings: o.rings,
          isLeader: o.leaderElection === undefined ? undefined : () => this.#leading,
          stopping: () => this.#phase === 'stopping' || this.#phase === 'stopped',
        });
        this.#log.info(`manager: serving /livez, /readyz${o.metrics ? ', /metrics' : ''} at ${this.#probeServer.url}`);
      }
      informers = this.#factory.run(informersStop.signal).catch(fail);
      await this.#factory.waitForCacheSync(runSignal);
      if (!runSignal.aborted) {
        this.#phase = 'running';
        this.#log.info(`manager: caches synced; running ${this.#names()}`);
        runnables = Promise.all((o.runnables ?? []).map((r) => r.run(runnablesStop.signal).catch(fail)));
        controllers = this.#runControllers(runSignal).catch(fail);
        await controllers;
      }
    } catch (error) {
      fail(error);
    } finally {
      failed.abort(); // everything below sees the stop, whatever ended the run (onStop set the phase)
      await controllers;
      runnablesStop.abort();
      await runnables;
      informersStop.abort();
      await informers;
      await this.#probeServer?.close();
      this.#probeServer = undefined;
      runSignal.removeEventListener('abort', onStop);
      this.#phase = 'stopped';
    }
    if (failure !== undefined) {
      this.#log.error(`manager stopped: ${failure.error instanceof Error ? failure.error.message : String(failure.error)}`);
      throw failure.error;
    }
    this.#log.info('manager stopped');
  }

  /** The controllers, with a marker that keeps {@link isLeading} true while they run. */
  #runControllers(signal: AbortSignal): Promise<void> {
    const controllers = this.#options.controllers ?? [];
    const marker: Runnable = {
      name: 'leading',
      run: (s) =>
        new Promise<void>((resolve) => {
          this.#leading = true;
          const end = (): void => {
            this.#leading = false;
            resolve();
          };
          if (s.aborted) end();
          else s.addEventListener('abort', end, { once: true });
        }),
    };
    if (this.#options.leaderElection === undefined) return runTogether([marker, ...controllers], signal);
    return runWhileLeading([marker, ...controllers], { logger: this.#options.logger, ...this.#options.leaderElection }, signal);
  }

  #names(): string {
    const all = [...(this.#options.controllers ?? []), ...(this.#options.runnables ?? [])].map((r) => r.name);
    return all.length === 0 ? 'nothing (no controllers or runnables)' : all.join(', ');
  }
}
