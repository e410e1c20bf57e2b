// One informer over a set of namespaces that can change while it runs: one list and watch per namespace,
// one view of the caches; a namespace removed leaves as deletes. A user of the partition core (`Partitions`).

import type { DeepReadonly, GroupVersionResource } from '../core/types.js';
import { validateOptions, InvalidOptionError } from '../core/options.js';
import { DNS_LABEL } from '../core/label-selector.js';
import { errorFields, resolveLogger, withFields, type Logger, type LoggerOption } from '../core/log.js';
import type { Permission } from '../core/permissions.js';
import { abortableWait } from '../core/abort.js';
import { NamespaceIndex } from '../store/types.js';
import type { InformerHealth } from '../health/index.js';
import type { Observed } from '../observed/index.js';
import { InformerStoppedError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';
import type { AddEventHandlerOptions } from './options.js';
import { Partitions, type PartitionedIndexer } from './partitioned.js';
import { informerEventStream, type InformerEventStream, type InformerEventStreamOptions } from './events-stream.js';
import type { SharedIndexInformer } from './shared-index-informer.js';

/** Options of {@link NamespaceSetInformer}. */
export interface NamespaceSetInformerOptions<T> {
  /** The namespaces cached from the start: at least one, each a namespace name (a DNS label), each once. Required. */
  namespaces: readonly string[];
  /**
   * A new, unstarted informer over one namespace — e.g. `(namespace) => factory.newInformer(resources.secrets,
   * { namespace })`. Each is run by this informer, and stopped when its namespace is removed. Required.
   */
  informerFor: (namespace: string) => SharedIndexInformer<T>;
  /** The name in logs and errors. Default `namespaces`. */
  name?: string;
  /** The resource the informers list and watch, for {@link NamespaceSetInformer.permissions}. Default: none (no permissions are declared). */
  resource?: GroupVersionResource;
  /**
   * Whether a namespace exists (a GET of the Namespace): asked once a namespace synced with an empty
   * cache — kube-apiserver lists a namespace that does not exist as an empty list — to warn when it
   * does not. `undefined` means it could not tell (e.g. no permission to get Namespaces). Default: not asked.
   */
  namespaceExists?: (namespace: string, signal: AbortSignal) => Promise<boolean | undefined>;
  /** Where the warnings go. Default `console`; `false` for silence. */
  logger?: LoggerOption;
}

const OPTION_SCHEMA = { namespaces: 'any', informerFor: 'function', name: 'string', resource: 'object', namespaceExists: 'function', logger: 'logger' } as const;

/** Throws `INVALID_OPTION` unless `namespace` is a namespace name. */
function checkNamespace(owner: string, namespace: unknown): string {
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new InvalidOptionError(`${owner}: ${JSON.stringify(namespace)} is not a namespace name (a lowercase RFC 1123 label of at most 63 characters; '' for every namespace is not a member of a namespace set)`);
  }
  return namespace;
}

/**
 * Checks a namespace set: a non-empty array of namespace names, each once. Returns it; throws
 * `INVALID_OPTION` naming `owner` otherwise. @hidden
 */
export function checkNamespaceSet(owner: string, namespaces: unknown): string[] {
  if (!Array.isArray(namespaces) || namespaces.length === 0) {
    throw new InvalidOptionError(`${owner} must be a non-empty array of namespace names, got ${JSON.stringify(namespaces)} (for every namespace, use one informer without a namespace)`);
  }
  const seen = new Set<string>();
  for (const item of namespaces as unknown[]) {
    const ns = checkNamespace(owner, item);
    if (seen.has(ns)) throw new InvalidOptionError(`${owner} lists ${ns} twice`);
    seen.add(ns);
  }
  return [...seen];
}

/**
 * One informer over a set of namespaces: one `SharedIndexInformer` (one list and one watch) per
 * namespace, read through one view (`getIndexer`, `get`, `list`; `byIndex('namespace', ns)` asks that
 * namespace's cache alone), handlers added once for every namespace, present and future. The set
 * changes while it runs: {@link NamespaceSetInformer.addNamespace} lists and watches one more
 * namespace (one list; the others are not listed again), {@link NamespaceSetInformer.removeNamespace}
 * hands that namespace's cached objects to every handler as deletes, then stops its informer.
 *
 * Sync: {@link NamespaceSetInformer.hasSynced} is true when every namespace has synced **or cannot
 * sync** — a namespace whose list is refused with an answer retrying cannot fix (403 forbidden: the
 * service account may not read it) is set aside, so the other namespaces sync and deliver. It is
 * never silent: a warning names the namespace and the reason, `health()` has its entry not ready
 * with the reason in `problems` (so a `/readyz` over it answers 503 naming it),
 * {@link NamespaceSetInformer.failedNamespaces} lists it and
 * {@link NamespaceSetInformer.whenNamespaceSynced} rejects with the reason. Its informer keeps
 * retrying: once it may read, the namespace syncs and its objects arrive as adds.
 *
 * A namespace that does not exist is listed by kube-apiserver as an empty list: with the
 * `namespaceExists` option, an empty namespace is checked once and a warning names it when it is missing.
 *
 * Warning: a namespace removed is reported to handlers as deletes of objects that still exist on
 * the server: a handler that cleans up after deleted objects must tell the two apart (the
 * `Controller`'s `removeNamespace` does: it reconciles none of them).
 */
export class NamespaceSetInformer<T> {
  readonly #options: NamespaceSetInformerOptions<T>;
  readonly #name: string;
  readonly #log: Logger;
  /** The set as asked: what runs while running, and what will run before. */
  readonly #namespaces: Set<string>;
  readonly #parts: Partitions<string, T>;
  /** Aborted when the run ends: the namespace checks of `namespaceExists`. */
  #running: AbortController | undefined;

  /**
   * Throws `INVALID_OPTION` for an option of the wrong type or an unknown one, an empty `namespaces`
   * (a set of no namespace caches nothing: for every namespace use a `SharedIndexInformer`), a name that
   * is not a namespace's, and a namespace listed twice.
   */
  constructor(options: NamespaceSetInformerOptions<T>) {
    validateOptions('NamespaceSetInformer', options, OPTION_SCHEMA);
    const owner = `NamespaceSetInformer${options.name === undefined ? '' : ` ${options.name}`}`;
    this.#namespaces = new Set(checkNamespaceSet(`${owner}: option namespaces`, options.namespaces));
    this.#options = options;
    this.#name = options.name ?? 'namespaces';
    this.#log = withFields(resolveLogger(options.logger), { component: 'informer', name: this.#name });
    this.#parts = new Partitions<string, T>({
      name: this.#name,
      label: `namespace-set informer ${this.#name}`,
      partName: (ns) => `namespace ${ns}`,
      informerFor: (ns) => options.informerFor(ns),
      compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
      indexPart: (index, value) => (index === NamespaceIndex ? value : undefined),
      isolate: {
        failed: (ns, err) => this.#log.warn(`informer ${this.#name}: namespace ${ns} cannot sync and is set aside (the other namespaces go on; it keeps retrying): ${err.message}`, { namespace: ns, ...errorFields(err) }),
        recovered: (ns) => this.#log.info(`informer ${this.#name}: namespace ${ns} synced and is cached again`, { namespace: ns }),
      },
    });
  }

  /** The name in logs and errors (`name`, default `namespaces`). */
  get name(): string {
    return this.#name;
  }

  /** The namespaces of the set, sorted (before `run` too: those it will cache). */
  namespaces(): string[] {
    return [...this.#namespaces].sort();
  }

  /** The namespaces set aside because they cannot sync (403, ...), sorted; see the class's "Sync". */
  failedNamespaces(): string[] {
    return this.#parts.keys().filter((ns) => this.#parts.failure(ns) !== undefined);
  }

  /**
   * Adds `namespace` to the set: on a running informer it is listed and watched at once (one list; the
   * other namespaces are not listed again) and its objects reach every handler as adds (`isInInitialList`).
   * Throws `INVALID_OPTION` for a name that is not a namespace's and for a namespace already in the set
   * (nothing is changed), `INFORMER_STOPPED` on a stopped informer, and what `informerFor` throws.
   */
  addNamespace(namespace: string): void {
    const owner = `informer ${this.#name}: addNamespace`;
    checkNamespace(owner, namespace);
    if (this.#parts.isStopped()) throw new InformerStoppedError(`${owner}(${namespace}): the informer has stopped`);
    if (this.#namespaces.has(namespace)) throw new InvalidOptionError(`${owner}(${namespace}): the namespace is in the set already (${this.namespaces().join(', ')})`);
    if (this.#parts.isRunning()) {
      this.#parts.add(namespace); // throws what informerFor throws: then the set is unchanged
      this.#checkExists(namespace);
    }
    this.#namespaces.add(namespace);
  }

  /**
   * Removes `namespace` from the set. On a running informer its objects leave the view at once, and
   * every handler gets each of them as a delete (the last state cached), after what it had buffered;
   * then its informer stops. The other namespaces are not touched. Removing the last namespace leaves
   * an empty set: the informer caches nothing, is synced, and takes namespaces again with
   * {@link NamespaceSetInformer.addNamespace}. Throws `INVALID_OPTION` for a namespace not in the set.
   */
  removeNamespace(namespace: string): void {
    if (!this.#namespaces.has(namespace)) {
      throw new InvalidOptionError(`informer ${this.#name}: removeNamespace(${JSON.stringify(namespace)}): the namespace is not in the set (${this.namespaces().join(', ') || 'empty'})`);
    }
    this.#namespaces.delete(namespace);
    this.#parts.remove(namespace, true);
  }

  /**
   * Resolves once `namespace`'s cache has synced. Rejects with `INVALID_OPTION` for a namespace not
   * in the set, with the reason when it cannot sync (its informer's `whenSynced` error: `API_STATUS`
   * 403, ...), with `INFORMER_STOPPED` when it is removed or the informer stops first, and with
   * `ABORTED` when `signal` aborts. Before `run`, it waits for the run.
   */
  async whenNamespaceSynced(namespace: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (!this.#namespaces.has(namespace)) throw new InvalidOptionError(`informer ${this.#name}: whenNamespaceSynced(${JSON.stringify(namespace)}): the namespace is not in the set (${this.namespaces().join(', ') || 'empty'})`);
      if (this.#parts.isStopped()) throw new InformerStoppedError(`informer ${this.#name} stopped before namespace ${namespace} synced`);
      const failure = this.#parts.failure(namespace);
      if (failure !== undefined) throw failure;
      if (this.#parts.informerOf(namespace) !== undefined) {
        if (await this.#parts.whenPartSynced(namespace, signal)) return;
        continue; // removed meanwhile, or the run ended: said above
      }
      await abortableWait(this.#parts.changed(), signal, `stopped waiting for namespace ${namespace} of informer ${this.#name} to sync: the signal was aborted`);
    }
  }

  /**
   * Adds `handler` to every namespace's informer, present and future. The registration has synced when
   * every namespace of the set has synced (or is set aside) and the handler processed its initial list.
   */
  addEventHandler(handler: ResourceEventHandler<T>, options: AddEventHandlerOptions = {}): SharedInformerRegistration {
    return this.#parts.addEventHandler(handler, options);
  }

  /**
   * The notifications of every namespace as an async iterable, each loop a handler registration of its
   * own: see {@link InformerEventStream}. Throws `INFORMER_STOPPED` when stopped.
   */
  events(signal?: AbortSignal, options?: InformerEventStreamOptions): InformerEventStream<T> {
    return informerEventStream(this, this.#name, signal, options);
  }

  /** Removes a handler added with {@link NamespaceSetInformer.addEventHandler} from every namespace. */
  removeEventHandler(registration: SharedInformerRegistration): void {
    this.#parts.removeEventHandler(registration);
  }

  /** The union of the namespaces' caches; `byIndex('namespace', ns)` asks that namespace's cache alone. */
  getIndexer(): PartitionedIndexer<T> {
    return this.#parts.getIndexer();
  }

  /** The cached object under `key` (`namespace/name`) in any namespace of the set (the cache's own: read-only). */
  get(key: string): DeepReadonly<T> | undefined {
    return this.#parts.getIndexer().getByKey(key);
  }

  /** Every cached object of the set (the cache's own: read-only). */
  list(): DeepReadonly<T>[] {
    return this.#parts.getIndexer().list();
  }

  /** True while running when every namespace has synced or is set aside (see the class's "Sync"); false before `run` and after it. */
  hasSynced(): boolean {
    return this.#parts.isRunning() && this.#parts.hasSynced();
  }

  /**
   * Resolves once {@link NamespaceSetInformer.hasSynced} is true; rejects with `INFORMER_STOPPED` when
   * the informer stops first and `ABORTED` when `signal` aborts.
   */
  async whenSynced(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#parts.isStopped()) throw new InformerStoppedError(`informer ${this.#name} stopped before it synced`);
      if (this.hasSynced()) return;
      const changed = this.#parts.changed();
      // A namespace that cannot sync rejects: it is set aside (a change) — wait for that, not for it.
      const synced = this.#parts.keys().map((ns) => this.#parts.whenPartSynced(ns).catch(() => changed));
      await abortableWait(Promise.race([changed, Promise.all(synced)]), signal, `stopped waiting for informer ${this.#name} to sync: the signal was aborted`);
    }
  }

  /**
   * Waits until `written` is in the cache of its namespace (`SharedIndexInformer.awaitObserved`).
   * Resolves `undefined` at once when its namespace is not in the set: this informer does not cache it.
   */
  async awaitObserved(written: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    return this.#parts.awaitObserved(namespaceOf(written), written, signal);
  }

  /**
   * Waits until the cache of its namespace saw the deletion of `deleted` (`SharedIndexInformer.awaitDeleted`).
   * Resolves `undefined` at once when its namespace is not in the set.
   */
  async awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    return this.#parts.awaitDeleted(namespaceOf(deleted), deleted, signal);
  }

  /**
   * `health()` of each namespace's informer, by namespace (running namespaces only). A namespace set
   * aside is not ready, with its reason first in `problems`.
   */
  health(): Record<string, InformerHealth> {
    return Object.fromEntries(
      this.#parts.health().map(([ns, h]) => {
        const failure = this.#parts.failure(ns);
        if (failure === undefined) return [ns, h];
        const problem = `namespace ${ns} cannot sync and is set aside: ${failure.message}`;
        return [ns, { ...h, ready: false, healthy: false, problems: [problem, ...h.problems] }];
      }),
    );
  }

  /** `list` and `watch` of `resource` in each namespace of the set (none without the `resource` option). */
  permissions(): Permission[] {
    const resource = this.#options.resource;
    if (resource === undefined) return [];
    return this.namespaces().map((namespace) => ({ group: resource.group, resource: resource.resource, verbs: ['list', 'watch'], namespace, reason: `informer ${this.#name}` }));
  }

  /** Whether `run` was called. */
  isStarted(): boolean {
    return this.#parts.isStarted();
  }

  /** Whether `run` ended: this informer cannot run again. */
  isStopped(): boolean {
    return this.#parts.isStopped();
  }

  /**
   * Lists and watches every namespace of the set, following its changes, until `signal` aborts; then
   * stops every namespace's informer and resolves. Rejects when a namespace's informer fails (a handler
   * threw), having stopped the others, or cannot be made (`informerFor` threw); with `INFORMER_STOPPED`
   * when run a second time.
   */
  async run(signal: AbortSignal): Promise<void> {
    const running = new AbortController();
    try {
      await this.#parts.run(signal, () => {
        this.#running = running;
        for (const ns of this.#namespaces) {
          try {
            this.#parts.add(ns);
          } catch (err) {
            this.#parts.fail(`namespace ${ns}`, err);
            return;
          }
          this.#checkExists(ns);
        }
      });
    } finally {
      running.abort();
    }
  }

  /**
   * Once `namespace` synced with nothing cached, asks `namespaceExists` (when given) and warns when it
   * does not exist: kube-apiserver lists a missing namespace as an empty list, which looks like success.
   */
  #checkExists(namespace: string): void {
    const exists = this.#options.namespaceExists;
    const signal = this.#running?.signal;
    if (exists === undefined || signal === undefined) return;
    const informer = this.#parts.informerOf(namespace);
    void (async () => {
      const synced = await this.#parts.whenPartSynced(namespace, signal).catch(() => false); // a namespace that cannot sync is warned of already
      if (!synced) return;
      if (this.#parts.informerOf(namespace) !== informer || (informer?.getIndexer().listKeys().length ?? 0) > 0) return;
      if ((await exists(namespace, signal)) === false && !signal.aborted) {
        this.#log.warn(`informer ${this.#name}: namespace ${namespace} does not exist (its list was empty and the Namespace is not found); it is watched, and its objects arrive once it is created`, { namespace });
      }
    })().catch((err: unknown) => {
      if (!signal.aborted) this.#log.debug(`informer ${this.#name}: could not tell whether namespace ${namespace} exists: ${String(err)}`, { namespace });
    });
  }
}

/** `metadata.namespace` of an object, `''` without one. */
function namespaceOf(obj: unknown): string {
  const ns = (obj as { metadata?: { namespace?: unknown } } | null)?.metadata?.namespace;
  return typeof ns === 'string' ? ns : '';
}
