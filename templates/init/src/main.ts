// The process: runs the Manager until SIGTERM (or Ctrl-C), then stops in order within the grace period and exits.

import { shutdownSignal } from 'kube-informer/operations';
import { manager } from './manager.js';

await manager.run(shutdownSignal());
