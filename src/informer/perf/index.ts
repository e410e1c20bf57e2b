// The informer's performance paths: ready-made transforms that keep the cache small (transforms.ts), an
// update's unchanged parts shared with the cached object (share-unchanged.ts), and a fresh first list
// taken whole (first-list.ts). Each does what the plain path does, for less memory or CPU.
export * from './transforms.js';
export { shareUnchanged } from './share-unchanged.js';
export { FirstList } from './first-list.js';
