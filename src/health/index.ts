// The health room's barrel: what an informer knows of its own state — health() (health.ts), whether it synced and waits for it (sync-track.ts, wait-for-cache-sync.ts), and why it cannot (sync-failure.ts).
export * from './health.js';
export * from './sync-track.js';
export * from './sync-failure.js';
export * from './wait-for-cache-sync.js';
