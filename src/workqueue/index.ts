// The workqueue room's barrel.
export {};
