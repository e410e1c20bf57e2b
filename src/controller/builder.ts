// The controller builder: the primary (`for`), owned children (`owns`), other watched resources (`watches`).

import { validateGroupVersionResource, validateOptions, InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { SharedInformerFactory } from '../informer/factory.js';
import type { Controller, ControllerOptions, ControllerSpec, Reconciler } from './controller.js';
import type { WatchSpec } from './sources.js';
import type { SourceRole } from './sharded.js';
import { controllerOwnerKey, refKey, type MapFunc } from './mapping.js';
import type { Predicate } from './predicates.js';

/** Options of one watched resource (`for`, `owns`, `watches`). */
export interface WatchOptions<T> {
  /**
   * Events of this resource request a reconcile only when every predicate passes (see
   * `predicates.generationChanged`, `labelsChanged`, ...). Default: none (every add, update and delete counts).
   */
  predicates?: ReadonlyArray<Predicate<T>>;
}

function checkResource(owner: string, resource: ResourceDescriptor<unknown>): void {
  validateGroupVersionResource(owner, resource);
  if (typeof resource.kind !== 'string' || resource.kind === '' || typeof resource.namespaced !== 'boolean') {
    throw new InvalidOptionError(`${owner}: the resource must be a ResourceDescriptor with kind and namespaced (see resources.pods), got ${JSON.stringify(resource)}`);
  }
}

function checkWatchOptions<T>(owner: string, options: WatchOptions<T>): void {
  validateOptions(owner, options, { predicates: 'any' });
  if (options.predicates !== undefined && (!Array.isArray(options.predicates) || options.predicates.some((p: unknown) => typeof p !== 'function'))) {
    throw new InvalidOptionError(`${owner}: option predicates must be an array of functions`);
  }
}

/**
 * Describes a controller over one primary resource, then builds it. Created by {@link Controller.for}.
 * Each resource's informer is the factory's shared one (created by `build`); the controller only adds a
 * handler to it. A sharded controller (`sharded` option) caches its primary per owned slot instead.
 *
 * @example
 * ```ts
 * const controller = Controller.for(factory, configMapSets, { predicates: [predicates.generationChanged] })
 *   .owns(resources.configMaps)
 *   .build(async (key, ctx) => { ...; return Action.done(); }, { concurrency: 4 });
 * factory.start(signal);
 * await controller.run(signal);
 * ```
 */
export class ControllerBuilder<T> {
  readonly #factory: SharedInformerFactory;
  readonly #primary: ResourceDescriptor<T>;
  readonly #sources: WatchSpec[] = [];
  readonly #owned: Array<ResourceDescriptor<unknown>> = [];
  readonly #create: (spec: ControllerSpec<T>) => Controller<T>;
  #built = false;

  /**
   * Use {@link Controller.for}; `create` builds the controller from what was described.
   * @hidden
   */
  constructor(factory: SharedInformerFactory, primary: ResourceDescriptor<T>, options: WatchOptions<T>, create: (spec: ControllerSpec<T>) => Controller<T>) {
    checkResource('Controller.for', primary);
    checkWatchOptions('Controller.for', options);
    this.#factory = factory;
    this.#primary = primary;
    this.#create = create;
    this.#add('for', primary, (obj) => [keyOf(obj)], options);
  }

  /**
   * Reconciles the controlling owner of each object of `resource` — the owner reference with
   * `controller: true` whose group and kind are the primary's — when the object is added, changed or
   * deleted (for a change of owner, both owners). Objects without such a reference are ignored.
   */
  owns<C>(resource: ResourceDescriptor<C>, options: WatchOptions<NoInfer<C>> = {}): this {
    checkResource('ControllerBuilder.owns', resource);
    checkWatchOptions('ControllerBuilder.owns', options);
    const primary = this.#primary;
    this.#owned.push(resource);
    return this.#add('owns', resource, (obj) => {
      const key = controllerOwnerKey(obj, primary);
      return key === undefined ? [] : [key];
    }, options);
  }

  /**
   * Reconciles the primaries `map` names for each object of `resource` that is added, changed (both
   * states are mapped) or deleted — for relations other than ownership: a Secret referenced by name,
   * every primary of a namespace.
   */
  watches<W>(resource: ResourceDescriptor<W>, map: MapFunc<NoInfer<W>>, options: WatchOptions<NoInfer<W>> = {}): this {
    checkResource('ControllerBuilder.watches', resource);
    checkWatchOptions('ControllerBuilder.watches', options);
    if (typeof map !== 'function') throw new InvalidOptionError('ControllerBuilder.watches: map must be a function from an object to primary keys');
    return this.#add('watches', resource, (obj) => Array.from(map(obj as never), refKey), options);
  }

  /**
   * Builds the controller running `reconcile` for each key. Throws `INVALID_OPTION` for an option
   * out of range, or when called twice.
   */
  build(reconcile: Reconciler<T>, options: ControllerOptions = {}): Controller<T> {
    if (typeof reconcile !== 'function') throw new InvalidOptionError('ControllerBuilder.build: reconcile must be a function');
    if (this.#built) throw new InvalidOptionError('ControllerBuilder.build: this builder has built its controller already');
    this.#built = true;
    return this.#create({ factory: this.#factory, primary: this.#primary, sources: this.#sources, owned: this.#owned, reconcile, options });
  }

  #add<W>(role: SourceRole, resource: ResourceDescriptor<W>, keys: (obj: unknown) => string[], options: WatchOptions<W>): this {
    this.#sources.push({ role, resource, keys, predicates: (options.predicates ?? []) as Array<Predicate<unknown>> });
    return this;
  }
}

function keyOf(obj: unknown): string {
  const m = (obj as { metadata?: { name?: string; namespace?: string } } | null)?.metadata;
  return refKey({ name: m?.name ?? '', namespace: m?.namespace });
}
