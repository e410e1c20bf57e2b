// The fifo room's barrel: DeltaFIFO, its delta vocabulary and its errors.
export * from './types.js';
export * from './errors.js';
export * from './delta-fifo.js';
