// The informer room's barrel.
export {};
