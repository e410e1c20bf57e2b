// The command room's barrel: the `kube-informer` dispatcher (its executable is bin.ts); no entry point of the package exports it.
export { runCommand } from './main.js';
