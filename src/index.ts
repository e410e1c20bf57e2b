// kube-informer: client-go's informer machinery (tools/cache, util/workqueue) for Node controllers.
// Each group below is one room of src/, in the order data flows from the API server to a handler.
// The test kit is the separate entry point `kube-informer/testing`.

/**
 * kube-informer: client-go's informer machinery for Node controllers. Start with
 * {@link SharedInformerFactory} or {@link SharedIndexInformer}; see the guides for the data flow.
 *
 * @packageDocumentation
 * @module kube-informer
 */

// Shared types, keys, resource versions, errors, the injectable clock.
export * from './core/index.js';
// diagnostics_channel names.
export * from './observability/index.js';
// ListerWatcher contract and newListWatch over @kubernetes/client-node.
export * from './listwatch/index.js';
// Reflector: list, watch, resource-version guard, backoff, resync.
export * from './reflector/index.js';
// DeltaFIFO.
export * from './fifo/index.js';
// Store, Indexer, listers, label selectors.
export * from './store/index.js';
// The cache-mutation detector.
export * from './mutation/index.js';
// Controller loop, SharedIndexInformer, factory, sync waits, health.
export * from './informer/index.js';
// Work queues and rate limiters.
export * from './workqueue/index.js';
// Leader election on Leases.
export * from './leaderelection/index.js';
