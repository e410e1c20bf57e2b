// The one-informer-per-resource rule: what a factory's shared informer of one resource was made with, who
// asked for each option, and the check of a later caller's options against it.

import { deepEqual } from '../core/json.js';
import { InvalidOptionError } from '../core/options.js';
import type { IndexFunc, Indexers } from '../store/types.js';
import { stripManagedFields } from './perf/transforms.js';
import type { ResourceCacheOptions } from './cache-options.js';

/** The options a caller of one resource did not choose but that the caller sets by default (the Controller's `stripManagedFields: true`). */
export type CacheDefaults = Pick<ResourceCacheOptions<unknown>, 'stripManagedFields'>;

type Compared = 'namespaces' | 'labelSelector' | 'fieldSelector' | 'transform' | 'metadataOnly' | 'stripManagedFields' | 'resyncPeriodMs';
const COMPARED: readonly Compared[] = ['namespaces', 'labelSelector', 'fieldSelector', 'transform', 'metadataOnly', 'stripManagedFields', 'resyncPeriodMs'];

/** How a value was set: by a caller that passed it, by a caller's default, or by nobody (the factory's). */
interface Origin {
  readonly caller: string;
  readonly explicit: boolean;
}

function show(option: Compared, value: unknown): string {
  if (value === undefined) return option === 'namespaces' ? "the factory's namespace" : 'none';
  if (typeof value === 'function') return `function ${value.name === '' ? '(anonymous)' : value.name}`;
  return JSON.stringify(value);
}

function same(option: Compared, a: unknown, b: unknown): boolean {
  if (option !== 'namespaces') return a === b;
  const x = a as readonly string[] | undefined;
  const y = b as readonly string[] | undefined;
  if (x === undefined || y === undefined) return x === y;
  return deepEqual([...x].sort(), [...y].sort()); // a set: the order is not the caller's choice
}

/**
 * The settings of one shared informer and who chose them. Made with the first caller's options;
 * {@link CacheSettings.join} checks every later caller's.
 */
export class CacheSettings {
  /** The resource key (`v1/pods`). */
  readonly resource: string;
  readonly namespaces: readonly string[] | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  readonly transform: ((obj: unknown) => unknown) | undefined;
  readonly metadataOnly: boolean;
  /** Read by the informer's transform on every object: a default may still be overridden before the informer starts. */
  #strip: boolean;
  readonly resyncPeriodMs: number;
  /** Every index function of the informer, by name (the factory's `namespace` index too). */
  readonly indexers: Record<string, IndexFunc<unknown>>;
  /** The informer's transform reads `#strip` (it was made): a change of the flag reaches it. */
  #honours = false;
  readonly #origins = new Map<Compared | `indexers.${string}`, Origin>();

  constructor(resource: string, caller: string, options: ResourceCacheOptions<unknown>, defaults: CacheDefaults, base: { resyncPeriodMs: number; indexers: Indexers<unknown> }) {
    this.resource = resource;
    this.namespaces = options.namespaces;
    this.labelSelector = options.labelSelector;
    this.fieldSelector = options.fieldSelector;
    this.transform = options.transform;
    this.metadataOnly = options.metadataOnly ?? false;
    this.#strip = options.stripManagedFields ?? defaults.stripManagedFields ?? false;
    this.resyncPeriodMs = options.resyncPeriodMs ?? base.resyncPeriodMs;
    this.indexers = { ...base.indexers };
    for (const option of COMPARED) {
      if (options[option] !== undefined) this.#origins.set(option, { caller, explicit: true });
      else if (option === 'stripManagedFields' && defaults.stripManagedFields !== undefined) this.#origins.set(option, { caller, explicit: false });
    }
    for (const [name, fn] of Object.entries(options.indexers ?? {})) {
      this.indexers[name] = fn;
      this.#origins.set(`indexers.${name}`, { caller, explicit: true });
    }
  }

  /** Whether `metadata.managedFields` is stripped from objects entering the cache. */
  get stripManagedFields(): boolean {
    return this.#strip;
  }

  /**
   * The transform of the informer: strip managed fields, then `factory`'s, then the resource's; undefined
   * when none applies (the informer keeps its fastest paths). It reads the strip setting on every object,
   * so an override before the informer starts takes effect.
   */
  informerTransform(factory: ((obj: unknown) => unknown) | undefined): ((obj: unknown) => unknown) | undefined {
    const own = this.transform;
    if (!this.#strip && factory === undefined && own === undefined) return undefined;
    this.#honours = true;
    return (obj) => {
      let out = this.#strip ? stripManagedFields(obj) : obj;
      if (factory !== undefined) out = factory(out);
      return own === undefined ? out : own(out);
    };
  }

  /**
   * Checks a later caller's options (`caller`, named `owner` in errors) against these settings. Returns the index functions to add to the
   * informer (new names). Throws `INVALID_OPTION` naming both callers and both values when an option
   * the caller passed has another value. A value set only by another caller's default
   * (`stripManagedFields` of a Controller) gives way to an explicit ask while the informer has not
   * started; a caller's own default never conflicts.
   */
  join(owner: string, caller: string, options: ResourceCacheOptions<unknown>, started: boolean): Indexers<unknown> {
    for (const option of COMPARED) {
      const asked = options[option];
      if (asked === undefined) continue;
      const current = option === 'stripManagedFields' ? this.#strip : this[option];
      const origin = this.#origins.get(option);
      if (same(option, current, asked)) {
        if (origin === undefined || !origin.explicit) this.#origins.set(option, { caller, explicit: true });
        continue;
      }
      if (option === 'stripManagedFields' && origin !== undefined && !origin.explicit && !started && this.#honours) {
        this.#strip = asked as boolean;
        this.#origins.set(option, { caller, explicit: true });
        continue;
      }
      throw this.#conflict(owner, option, asked, current, origin, started);
    }
    const added: Indexers<unknown> = {};
    for (const [name, fn] of Object.entries(options.indexers ?? {})) {
      const existing = this.indexers[name];
      if (existing === fn) continue;
      if (existing !== undefined) {
        const by = this.#origins.get(`indexers.${name}`)?.caller ?? 'the factory (its namespace index)';
        throw new InvalidOptionError(
          `${owner}: option indexers.${name} of ${this.resource} is another function than the one ${by} gave the shared informer; ` +
            'one informer per resource per factory: give the index another name, pass the same function, or use a second factory or factory.newInformer',
        );
      }
      added[name] = fn;
    }
    for (const [name, fn] of Object.entries(added)) {
      this.indexers[name] = fn;
      this.#origins.set(`indexers.${name}`, { caller, explicit: true });
    }
    return added;
  }

  #conflict(owner: string, option: Compared, asked: unknown, current: unknown, origin: Origin | undefined, started: boolean): InvalidOptionError {
    const theirs = origin === undefined ? `${show(option, current)} (the default)` : `${show(option, current)} (${origin.explicit ? 'asked by' : 'the default of'} ${origin.caller})`;
    const late = origin !== undefined && !origin.explicit && started ? '; the informer has started, so its default can no longer change: pass the same value to that caller too' : '';
    return new InvalidOptionError(
      `${owner}: option ${option} of ${this.resource} is ${show(option, asked)}, but the factory's shared informer of ${this.resource} has ${theirs}${late}; ` +
        'one informer per resource per factory: pass the same options (or leave the option out to take the informer as it is), or use a second factory or factory.newInformer',
    );
  }
}
