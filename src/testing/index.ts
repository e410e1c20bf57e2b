// The testing room's barrel.
export {};
