// The store room's barrel.
export {};
