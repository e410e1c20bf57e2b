// The mutation room's barrel: the cache-mutation detector and its error.
export * from './diff.js';
export * from './detector.js';
