// A controller over namespace sets (option `namespaces`, or a source's own): the sources cached by the
// factory's NamespaceSetInformers, the set changed while it runs (`addNamespace` / `removeNamespace`), and
// the rule that keys of a namespace outside the primary's set are never reconciled.

import { InvalidOptionError } from '../core/options.js';
import type { Permission } from '../core/permissions.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { gvrKey } from '../informer/factory.js';
import { checkNamespaceSet, NamespaceSetInformer } from '../informer/index.js';
import type { SourceRole } from './sharded.js';
import type { WatchSpec } from './sources.js';

/**
 * Whether the controller's `namespaces` are the default set of a source: the primary and the owned
 * resources, when namespaced (owner references never cross namespaces); `watches` sources are watched
 * as the factory watches them (a mapping may point anywhere).
 */
export function followsNamespaces(namespaces: readonly string[] | undefined, role: SourceRole, resource: ResourceDescriptor<unknown>): boolean {
  return namespaces !== undefined && role !== 'watches' && resource.namespaced;
}

/**
 * The cache options of each source of a controller with option `namespaces` (checked here: a set, not
 * with `sharded`, nor on a factory with a `namespace`): its namespaced primary and owned sources get the
 * controller's set unless they name their own.
 */
export function sourceCaches(name: string, option: readonly string[] | undefined, ring: unknown, factoryNamespace: string | undefined): (s: WatchSpec) => WatchSpec['cache'] {
  const namespaces = option === undefined ? undefined : checkNamespaceSet(`Controller ${name}: option namespaces`, option);
  if (namespaces !== undefined && (ring !== undefined || factoryNamespace !== undefined)) {
    throw new InvalidOptionError(`Controller ${name}: option namespaces cannot be combined with ${ring !== undefined ? 'option sharded' : `a factory with a namespace (${factoryNamespace})`}`);
  }
  return (s) => (s.cache.namespaces === undefined && followsNamespaces(namespaces, s.role, s.resource) ? { ...s.cache, namespaces } : s.cache);
}

/** The namespace of a `namespace/name` key; `undefined` for a cluster-scoped key. */
function namespaceOfKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash < 0 ? undefined : key.slice(0, slash);
}

/** A controller's sources cached over namespace sets (the factory's `NamespaceSetInformer`s), by source index. */
export class NamespacedSources {
  readonly #name: string;
  /** The controller's own set (option `namespaces`), as changed since; `undefined` without the option. */
  readonly #namespaces: Set<string> | undefined;
  /** Each source's namespace-set informer, `undefined` for a source that has none; the primary first. */
  readonly #sets: ReadonlyArray<NamespaceSetInformer<unknown> | undefined>;
  /** Namespaces added while running whose caches are not all synced yet: the keys requested meanwhile, held. */
  readonly #pending = new Map<string, Set<string>>();

  /** `informers`: each source's informer (those that are `NamespaceSetInformer`s are its sets). */
  constructor(name: string, namespaces: readonly string[] | undefined, informers: readonly unknown[]) {
    this.#name = name;
    this.#namespaces = namespaces === undefined ? undefined : new Set(namespaces);
    this.#sets = informers.map((i) => (i instanceof NamespaceSetInformer ? (i as NamespaceSetInformer<unknown>) : undefined));
  }

  /** Whether source `index` is cached over a namespace set. */
  caches(index: number): boolean {
    return this.#sets[index] !== undefined;
  }

  /** The controller's set (option `namespaces`) or else the union of its sources' sets, sorted; `undefined` when no source has a set. */
  namespaces(): string[] | undefined {
    if (!this.#sets.some((i) => i !== undefined)) return undefined;
    const all = this.#namespaces ?? new Set(this.#informers().flatMap((i) => i.namespaces()));
    return [...all].sort();
  }

  /** Whether the controller reconciles `key`: a cluster-scoped key, a primary not cached by a set, or one of a namespace in the primary's set. */
  covers(key: string): boolean {
    const ns = namespaceOfKey(key);
    const primary = this.#sets[0];
    return ns === undefined || primary === undefined || primary.namespaces().includes(ns);
  }

  /**
   * Holds `key` when its namespace was added while running and its caches have not all synced: it is
   * requested once they have (so each primary of an added namespace is reconciled once, not once per
   * cache). Returns whether it was held.
   */
  hold(key: string): boolean {
    const ns = namespaceOfKey(key);
    const held = ns === undefined ? undefined : this.#pending.get(ns);
    held?.add(key);
    return held !== undefined;
  }

  /** A new run: nothing is held. */
  forRun(): void {
    this.#pending.clear();
  }

  /**
   * Adds `namespace` to every source's set that lacks it; on a running controller the keys requested for
   * it are held until its caches synced (or cannot sync), then handed to `release` once each. Throws
   * `INVALID_OPTION` when every set has it already.
   */
  add(namespace: string, running: boolean, release: (key: string) => void): void {
    this.#needSets('addNamespace');
    checkNamespaceSet(`Controller ${this.#name}: addNamespace`, [namespace]);
    const lacking = this.#informers().filter((i) => !i.namespaces().includes(namespace));
    if (lacking.length === 0) throw new InvalidOptionError(`Controller ${this.#name}: addNamespace(${namespace}): the namespace is in the set already (${this.#list()})`);
    for (const informer of lacking) informer.addNamespace(namespace);
    this.#namespaces?.add(namespace);
    if (!running) return; // the run's first sync covers it
    const held = new Set<string>();
    this.#pending.set(namespace, held);
    void Promise.allSettled(lacking.map((i) => i.whenNamespaceSynced(namespace))).then(() => {
      if (this.#pending.get(namespace) !== held) return; // removed meanwhile, or a new run
      this.#pending.delete(namespace);
      for (const key of held) release(key);
    });
  }

  /** Removes `namespace` from every source's set that has it. Throws `INVALID_OPTION` when none has it. */
  remove(namespace: string): void {
    this.#needSets('removeNamespace');
    const having = this.#informers().filter((i) => i.namespaces().includes(namespace));
    if (having.length === 0) throw new InvalidOptionError(`Controller ${this.#name}: removeNamespace(${JSON.stringify(namespace)}): the namespace is not in the set (${this.#list()})`);
    this.#namespaces?.delete(namespace);
    this.#pending.delete(namespace);
    for (const informer of having) informer.removeNamespace(namespace);
  }

  /** `list` and `watch` of each source cached over a set, in each namespace of its set now. */
  permissions(sources: ReadonlyArray<{ readonly role: SourceRole; readonly resource: ResourceDescriptor<unknown> }>, controller: string): Permission[] {
    return this.#sets.flatMap((informer, i) => {
      if (informer === undefined) return [];
      const { role, resource } = sources[i];
      return informer.namespaces().map((namespace) => ({ group: resource.group, resource: resource.resource, verbs: ['list', 'watch'] as const, namespace, reason: `informer of ${gvrKey(resource)} (${role}) of controller ${controller}` }));
    });
  }

  #list(): string {
    return this.namespaces()?.join(', ') || 'empty';
  }

  /** Throws `INVALID_OPTION` when no source has a namespace set. */
  #needSets(call: string): void {
    if (this.namespaces() === undefined) throw new InvalidOptionError(`Controller ${this.#name}: ${call} needs a namespace set (the option namespaces, or a source's own)`);
  }

  /** The distinct namespace-set informers (two sources of one resource share one). */
  #informers(): Array<NamespaceSetInformer<unknown>> {
    return [...new Set(this.#sets.filter((i) => i !== undefined))];
  }
}
