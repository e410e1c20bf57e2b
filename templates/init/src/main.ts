// The process: the Manager on the cluster's configuration, run until SIGTERM (or Ctrl-C), then stopped in order within the grace period.

import { loadKubeConfig } from 'kube-informer';
import { jsonLogger, shutdownSignal } from 'kube-informer/operations';
import { createManager } from './manager.js';

/** One JSON object per line on stdout, for every part of the process: what a log collector reads. */
const logger = jsonLogger();

// In a pod: the ServiceAccount's token (re-read when it rotates); elsewhere KUBECONFIG or ~/.kube/config.
const manager = createManager(loadKubeConfig({ logger }), logger);
await manager.run(shutdownSignal({ logger }));
