// The operator's Manager, built from the environment: what main.ts runs, and what `npm run manifests` reads to write the RBAC (kube-informer rbac ./dist/manager.js).

import { CoordinationV1Api } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import { loadKubeConfig } from 'kube-informer';
import { LeaseLock } from 'kube-informer/leaderelection';
import { jsonLogger, Manager, prometheusControllerMetricsProvider, registerInformerMetrics } from 'kube-informer/operations';
import { {{kindVar}}Controller } from './controller.js';
import { IDENTITY, NAME, NAMESPACE, PROBE_PORT, STOP_GRACE_MS } from './settings.js';
// @if webhooks
// @if crdByProcess
import { crdWithConversion, webhookServer } from './webhooks.js';
// @else
import { webhookServer } from './webhooks.js';
// @end
// @end

/** One JSON object per line on stdout: what a log collector reads. */
const logger = jsonLogger();

/** In a pod: the ServiceAccount's token (re-read when it rotates); elsewhere: `KUBECONFIG` or `~/.kube/config`. */
const kubeConfig = loadKubeConfig();

/** The operator's own Prometheus registry, served at `/metrics` on the probe port. */
export const metrics = new promClient.Registry();
promClient.collectDefaultMetrics({ register: metrics });

const { factory, controller } = {{kindVar}}Controller(kubeConfig, {
  logger,
  metricsProvider: prometheusControllerMetricsProvider(promClient, { registry: metrics }),
});
registerInformerMetrics(promClient, factory, { registry: metrics });
// @if webhooks
// @if certManager
const webhooks = webhookServer(logger);
// @else
const webhooks = webhookServer(kubeConfig, logger);
// @end
// @end

/**
 * The Manager: the informers in every replica (a standby is warm), the controller only in the replica
 * that holds the Lease `{{name}}` in the pod's namespace, `/livez`, `/readyz` and `/metrics` on
 * {@link PROBE_PORT}. On SIGTERM it stops in order within {@link STOP_GRACE_MS} and releases the
 * Lease, so another replica takes over at once.
 */
export const manager = new Manager(factory, {
  controllers: [controller],
  leaderElection: {
    lock: new LeaseLock({ client: kubeConfig.makeApiClient(CoordinationV1Api), namespace: NAMESPACE, name: NAME, identity: IDENTITY }),
    releaseOnCancel: true,
  },
// @if webhooks
  webhookServer: webhooks,
// @end
// @if crdByProcess
  // The CRD names the conversion webhook with the CA this process generated: the Manager installs it.
  crds: [crdWithConversion(webhooks.caBundle())],
// @end
  probes: { port: PROBE_PORT, host: '0.0.0.0' },
  metrics,
  stopGraceMs: STOP_GRACE_MS,
  logger,
});
