// The leaderelection room's barrel.
export {};
