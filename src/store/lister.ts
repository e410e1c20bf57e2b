// Listers: read-only, selector-aware views of an indexer, like client-go's generated listers.

import type { DeepReadonly } from '../core/types.js';
import { getMeta } from '../core/types.js';
import { namespacedKey } from '../core/keys.js';
import { everythingSelector, type LabelSelector } from '../core/label-selector.js';
import { toLabelSelector, type LabelSelectorInput } from '../core/selector-parser.js';
import { NamespaceIndex, type Indexer, type Store } from './types.js';

/** Reads of one namespace: client-go's `GenericNamespaceLister` / generated `XxxNamespaceLister`. */
export interface NamespaceLister<T> {
  /**
   * The objects of this namespace whose labels match `selector` (default: all), in a fresh array.
   * Throws `SelectorParseError` (code `INVALID_SELECTOR`) for a malformed selector.
   */
  list(selector?: LabelSelectorInput): DeepReadonly<T>[];
  /** The object of this namespace named `name`, or `undefined`. */
  get(name: string): DeepReadonly<T> | undefined;
}

/**
 * Reads of a cache by name, namespace and labels: client-go's `GenericLister` / generated `XxxLister`.
 *
 * Objects are the cache's own, typed {@link DeepReadonly} (as handlers receive them). To change one,
 * copy it with {@link deepCopy}, which returns a mutable `T`. To pass one to code that only reads,
 * type that code's parameter `DeepReadonly<T>`: a plain `T` is assignable to it too, so one function
 * serves cached objects and your own.
 */
export interface Lister<T> {
  /**
   * Every object whose labels match `selector` (default: all), in a fresh array. Throws
   * `SelectorParseError` (code `INVALID_SELECTOR`) for a malformed selector.
   */
  list(selector?: LabelSelectorInput): DeepReadonly<T>[];
  /** The cluster-scoped object named `name` (key `name`), or `undefined`. */
  get(name: string): DeepReadonly<T> | undefined;
  /** Reads limited to namespace `namespace`; `''` means all namespaces (and cluster-scoped `get`). */
  namespace(namespace: string): NamespaceLister<T>;
}

function isIndexer<T>(store: Store<T>): store is Indexer<T> {
  const s = store as Partial<Indexer<T>>;
  return typeof s.byIndex === 'function' && typeof s.getIndexers === 'function';
}

function selectorOf(selector: LabelSelectorInput | undefined): LabelSelector {
  return selector === undefined ? everythingSelector() : toLabelSelector(selector);
}

function labelsOf(obj: unknown): Readonly<Record<string, string>> | undefined {
  return getMeta(obj)?.labels;
}

/** Pushes each of `items` that `selector` accepts; skips matching entirely for the empty selector. */
function filter<T>(items: T[], selector: LabelSelector): DeepReadonly<T>[] {
  if (selector.empty()) return items as DeepReadonly<T>[];
  const out: DeepReadonly<T>[] = [];
  for (const obj of items) if (selector.matches(labelsOf(obj))) out.push(obj as DeepReadonly<T>);
  return out;
}

/** Every object of `namespace`: through the namespace index when there is one, else by scanning. */
function inNamespace<T>(store: Store<T>, namespace: string): T[] {
  if (isIndexer(store) && Object.hasOwn(store.getIndexers(), NamespaceIndex)) {
    return store.byIndex(NamespaceIndex, namespace);
  }
  const out: T[] = [];
  for (const obj of store.list()) if ((getMeta(obj)?.namespace ?? '') === namespace) out.push(obj);
  return out;
}

class NamespaceView<T> implements NamespaceLister<T> {
  readonly #store: Store<T>;
  readonly #namespace: string;

  constructor(store: Store<T>, namespace: string) {
    this.#store = store;
    this.#namespace = namespace;
  }

  list(selector?: LabelSelectorInput): DeepReadonly<T>[] {
    const sel = selectorOf(selector);
    if (this.#namespace === '') return filter(this.#store.list(), sel);
    return filter(inNamespace(this.#store, this.#namespace), sel);
  }

  get(name: string): DeepReadonly<T> | undefined {
    return this.#store.getByKey(namespacedKey(this.#namespace, name)) as DeepReadonly<T> | undefined;
  }
}

class StoreLister<T> implements Lister<T> {
  readonly #store: Store<T>;

  constructor(store: Store<T>) {
    this.#store = store;
  }

  list(selector?: LabelSelectorInput): DeepReadonly<T>[] {
    return filter(this.#store.list(), selectorOf(selector));
  }

  get(name: string): DeepReadonly<T> | undefined {
    return this.#store.getByKey(name) as DeepReadonly<T> | undefined;
  }

  namespace(namespace: string): NamespaceLister<T> {
    return new NamespaceView(this.#store, namespace);
  }
}

/**
 * Creates a {@link Lister} over an indexer (or a plain store) whose keys are `namespace/name`, as the
 * informers' are. Namespace reads use the `namespace` index ({@link NamespaceIndex}) when the indexer
 * has one, and scan every object otherwise. Every read returns a fresh array.
 *
 * The selector of `list` may be text (`'app=web,tier in (a,b)'`), a `matchLabels`-style record, or a
 * parsed {@link LabelSelector}; for the API's `{matchLabels, matchExpressions}` object use
 * `labelSelectorFromObject`. Omitting it lists everything; an empty selector also matches everything
 * (Kubernetes' meaning); a malformed one throws `SelectorParseError` and never matches everything.
 *
 * @param indexer - the cache to read, usually `informer.getIndexer()`
 */
export function newLister<T>(indexer: Indexer<T> | Store<T>): Lister<T> {
  return new StoreLister(indexer);
}
