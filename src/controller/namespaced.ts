// A controller over a set of namespaces (option `namespaces`): its namespaced primary and owned sources each
// a NamespaceSetInformer, the set changed while it runs (`addNamespace` / `removeNamespace`), and the rule
// that keys of a namespace outside the set are never reconciled.

import { InvalidOptionError } from '../core/options.js';
import type { Permission } from '../core/permissions.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { gvrKey, type SharedInformerFactory } from '../informer/factory.js';
import { NamespaceSetInformer, checkNamespaceSet } from '../informer/index.js';
import type { LoggerOption } from '../core/log.js';
import type { SourceRole } from './sharded.js';

/**
 * Whether a source of a controller with a namespace set is cached per namespace: the primary and the
 * owned resources, when namespaced (owner references never cross namespaces); `watches` sources are
 * watched whole by the factory (a mapping may point anywhere).
 */
export function followsNamespaces(namespaces: readonly string[] | undefined, role: SourceRole, resource: ResourceDescriptor<unknown>): boolean {
  return namespaces !== undefined && role !== 'watches' && resource.namespaced;
}

/** The namespace of a `namespace/name` key; `undefined` for a cluster-scoped key. */
function namespaceOfKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash < 0 ? undefined : key.slice(0, slash);
}

/** A controller's namespace set and, while it runs, the namespace-set informers of its sources. */
export class NamespacedSources {
  readonly #factory: SharedInformerFactory;
  readonly #name: string;
  readonly #resources: ReadonlyArray<ResourceDescriptor<unknown>>;
  readonly #logger: LoggerOption | undefined;
  readonly #namespaces: Set<string>;
  #informers = new Map<ResourceDescriptor<unknown>, NamespaceSetInformer<unknown>>();
  /** Namespaces added while running whose caches are not all synced yet: the keys requested meanwhile, held. */
  readonly #pending = new Map<string, Set<string>>();

  /** Throws `INVALID_OPTION` for an empty set, a name that is not a namespace's, a namespace twice. */
  constructor(factory: SharedInformerFactory, name: string, namespaces: readonly string[], resources: ReadonlyArray<ResourceDescriptor<unknown>>, logger: LoggerOption | undefined) {
    this.#factory = factory;
    this.#name = name;
    this.#resources = resources;
    this.#logger = logger;
    this.#namespaces = new Set(checkNamespaceSet(`Controller ${name}: option namespaces`, namespaces));
  }

  /** The set, sorted. */
  namespaces(): string[] {
    return [...this.#namespaces].sort();
  }

  /** Whether the controller reconciles `key`: a cluster-scoped key, or one of a namespace in the set. */
  covers(key: string): boolean {
    const ns = namespaceOfKey(key);
    return ns === undefined || this.#namespaces.has(ns);
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

  /** New namespace-set informers for a run, over the set as it is now. */
  forRun(): void {
    this.#pending.clear();
    this.#informers = new Map(
      this.#resources.map((resource) => {
        const key = gvrKey(resource);
        const informer = new NamespaceSetInformer<unknown>({
          name: `controller ${this.#name}: ${key}`,
          namespaces: this.namespaces(),
          resource,
          logger: this.#logger,
          informerFor: (namespace) => this.#factory.newInformer(resource, { namespace, name: `${key}@${namespace}` }),
        });
        return [resource, informer];
      }),
    );
  }

  /** The namespace-set informer of `resource` in the current run. */
  informerOf(resource: ResourceDescriptor<unknown>): NamespaceSetInformer<unknown> {
    return this.#informers.get(resource) as NamespaceSetInformer<unknown>;
  }

  /** Runs every namespace-set informer until `signal` aborts; rejects with the first failure. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.run(signal)));
  }

  /**
   * Adds `namespace` to the set and to every running informer; the keys requested for it are held until
   * its caches synced (or cannot sync), then handed to `release` once each. Throws `INVALID_OPTION` when
   * it is in the set already.
   */
  add(namespace: string, release: (key: string) => void): void {
    checkNamespaceSet(`Controller ${this.#name}: addNamespace`, [namespace]);
    if (this.#namespaces.has(namespace)) throw new InvalidOptionError(`Controller ${this.#name}: addNamespace(${namespace}): the namespace is in the set already (${this.namespaces().join(', ')})`);
    const running = this.#running();
    for (const informer of running) informer.addNamespace(namespace);
    this.#namespaces.add(namespace);
    if (!running.some((i) => i.isStarted())) return; // not running: the run's first sync covers it
    const held = new Set<string>();
    this.#pending.set(namespace, held);
    void Promise.allSettled(running.map((i) => i.whenNamespaceSynced(namespace))).then(() => {
      if (this.#pending.get(namespace) !== held) return; // removed meanwhile, or a new run
      this.#pending.delete(namespace);
      for (const key of held) release(key);
    });
  }

  /** Removes `namespace` from the set and from every running informer. Throws `INVALID_OPTION` when it is not in the set. */
  remove(namespace: string): void {
    if (!this.#namespaces.has(namespace)) throw new InvalidOptionError(`Controller ${this.#name}: removeNamespace(${JSON.stringify(namespace)}): the namespace is not in the set (${this.namespaces().join(', ') || 'empty'})`);
    this.#namespaces.delete(namespace);
    this.#pending.delete(namespace);
    for (const informer of this.#running()) informer.removeNamespace(namespace);
  }

  /** `list` and `watch` of each resource in each namespace of the set. */
  permissions(role: (resource: ResourceDescriptor<unknown>) => string): Permission[] {
    return this.#resources.flatMap((resource) =>
      this.namespaces().map((namespace) => ({ group: resource.group, resource: resource.resource, verbs: ['list', 'watch'] as const, namespace, reason: `informer of ${gvrKey(resource)} (${role(resource)}) of controller ${this.#name}` })),
    );
  }

  /** The informers of the current run that still take changes of the set. */
  #running(): Array<NamespaceSetInformer<unknown>> {
    return [...this.#informers.values()].filter((i) => !i.isStopped()); // an informer of a run not started yet takes it too
  }
}
