// The leaderelection room's barrel: the elector, the lock contract, the Lease and in-memory locks.
export * from './lock.js';
export * from './lease-lock.js';
export * from './memory-lock.js';
export * from './elector.js';
