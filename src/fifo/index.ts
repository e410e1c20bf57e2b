// The fifo room's barrel.
export {};
