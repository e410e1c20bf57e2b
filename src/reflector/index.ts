// The reflector room's barrel.
export {};
