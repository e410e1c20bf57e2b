// The listwatch room's barrel: the ListerWatcher contract and newListWatch over @kubernetes/client-node.
export * from './types.js';
