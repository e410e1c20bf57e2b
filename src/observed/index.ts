// The observed room's barrel: read-your-writes waiters — "the cache holds this write (or its deletion)" (observed.ts) and "the cache caught up with this resource version or relist" (catch-up.ts).
export * from './observed.js';
export * from './catch-up.js';
