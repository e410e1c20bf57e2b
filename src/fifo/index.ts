// The fifo room's barrel: DeltaFIFO, its delta vocabulary and its errors (and the internal sink of a first list taken whole).
export * from './types.js';
export * from './errors.js';
export * from './delta-fifo.js';
export type { FirstListSink } from './list-staging.js';
