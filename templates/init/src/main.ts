// The process: the Manager on the cluster's configuration, run until SIGTERM (or Ctrl-C), then stopped in order within the grace period.

import { loadKubeConfig } from 'kube-informer';
import { shutdownSignal } from 'kube-informer/operations';
import { createManager } from './manager.js';

// In a pod: the ServiceAccount's token (re-read when it rotates); elsewhere KUBECONFIG or ~/.kube/config.
const manager = createManager(loadKubeConfig());
await manager.run(shutdownSignal());
