// The Backup operator of docs/operator-guide.md as a process: the CRD with its conversion webhook, the webhooks and the controller under one Manager.
//
// Run: npx tsx examples/backup/main.ts   — against the cluster of KUBECONFIG (envtest's, or a local one:
// the API server must reach https://127.0.0.1:9443). Ctrl-C stops it.

import { KubeConfig } from '@kubernetes/client-node';
import { Manager } from '../../src/operations/index.js';
import { backupOperator } from './operator.js';
import { backupCrd, backupWebhookServer } from './webhooks.js';
import { isMain } from '../lib/cluster.js';

/** Runs the operator until `signal` aborts: webhooks first, then the CRD (with conversion), then the informers and the controller. */
export async function runBackupOperator(kubeConfig: KubeConfig, signal: AbortSignal, options: { port?: number } = {}): Promise<void> {
  const port = options.port ?? 9443;
  const server = backupWebhookServer({ port, kubeConfig });
  const { factory, controller } = backupOperator(kubeConfig);
  const manager = new Manager(factory, {
    crds: [backupCrd(`https://127.0.0.1:${port}`, server.caBundle())],
    webhookServer: server,
    controllers: [controller],
  });
  await manager.run(signal);
}

if (isMain(import.meta.url)) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  await runBackupOperator(kubeConfig, stop.signal);
}
