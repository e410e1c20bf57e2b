// What the controller builder checks: the options of a watched resource (`for`, `owns`, `watches`) and the
// resource itself; the builder (`ControllerBuilder`) lives beside `Controller` in controller.ts.

import { validateGroupVersionResource, validateOptions, InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
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

function checkWatchOptions(owner: string, options: { predicates?: unknown }): void {
  validateOptions(owner, options, {});
  if (options.predicates !== undefined && (!Array.isArray(options.predicates) || options.predicates.some((p: unknown) => typeof p !== 'function'))) {
    throw new InvalidOptionError(`${owner}: option predicates must be an array of functions`);
  }
}

/** The checks of `Controller.for`, `owns` and `watches` (ControllerBuilder, in controller.ts): the resource, then its options. */
export { checkResource, checkWatchOptions };
