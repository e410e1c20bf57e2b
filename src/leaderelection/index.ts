// The leaderelection entry point (`kube-informer/leaderelection`): the elector, the lock contract, the Lease and in-memory locks.
export { LeaderElectionError, LockConflictError, LockNotFoundError } from './lock.js';
export type { LeaderElectionRecord, ResourceLock, LeaderElectionFailure } from './lock.js';
export { LeaseLock } from './lease-lock.js';
export type { LeaseObject, LeaseMetadata, LeaseSpecFields, LeaseClient, LeaseLockOptions, LeaseWatch } from './lease-lock.js';
export { InMemoryLockStore, InMemoryLock } from './memory-lock.js';
export type { InMemoryLockSnapshot, InMemoryLockOptions } from './memory-lock.js';
export { LeaderElector } from './elector.js';
export type { LeaderElectorOptions, LeaderElectionEventType, LeaderElectionEvent } from './elector.js';
