// The store room's barrel: Store, Indexer and listers (label selectors live in core/ and are re-exported here).
export type { IndexFunc, Indexers, Store, Indexer } from './types.js';
export type { ReadonlyIndexer, ReadonlyStore } from './readonly.js';
export { NamespaceIndex, metaNamespaceIndexFunc } from './types.js';
export { IndexFuncError, UnknownIndexError, IndexerConflictError } from './errors.js';
export type { IndexValues } from './indices.js';
export { IndexedStore, newStore, newIndexer } from './store.js';
export type { LabelSelectorObject } from '../core/label-selector.js';
export {
  SelectorParseError,
  everythingSelector,
  nothingSelector,
  labelSelectorFromSet,
  labelSelectorFromObject,
} from '../core/label-selector.js';
export { parseLabelSelector, toLabelSelector } from '../core/selector-parser.js';
export type { Lister, NamespaceLister } from './lister.js';
export { newLister } from './lister.js';
// For the informer's write paths (the first list taken whole); not in an entry point.
export { putByKey, adoptContent, prepareContent } from './store.js';
export type { StoreContent } from './store.js';
export { readonlyIndexer } from './readonly.js';
