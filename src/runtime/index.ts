// The runtime room: what everything that runs is built on — the runnable group (and, from the backoff branch, backoff and the ring buffer).

export { RunGroup, type Runnable, type RunGroupOptions, type RunGroupResult } from './run-group.js';
