// The mutation room's barrel.
export {};
