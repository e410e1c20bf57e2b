// The operator's Manager: what main.ts runs, and what `npm run manifests` reads to write the RBAC (src/manifests.ts).

import { CoordinationV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import type { LoggerOption } from 'kube-informer';
import { LeaseLock } from 'kube-informer/leaderelection';
import { Manager, prometheusControllerMetricsProvider, registerInformerMetrics } from 'kube-informer/operations';
import { {{kindVar}}Controller } from './controller.js';
import { IDENTITY, NAME, NAMESPACE, PROBE_PORT, STOP_GRACE_MS } from './settings.js';
// @if webhooks
// @if crdByProcess
import { crdWithConversion, webhookServer } from './webhooks.js';
// @else
import { webhookServer } from './webhooks.js';
// @end
// @end

/**
 * The Manager on `kubeConfig`: the informers in every replica (a standby is warm), the controller only
 * in the replica that holds the Lease `{{name}}` in the pod's namespace, `/livez`, `/readyz` and
 * `/metrics` on {@link PROBE_PORT}, everything logged to `logger`. On SIGTERM it stops in order within
 * {@link STOP_GRACE_MS} and releases the Lease, so another replica takes over at once.
 */
export function createManager(kubeConfig: KubeConfig, logger: LoggerOption): Manager {
  const metrics = new promClient.Registry();
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
  return new Manager(factory, {
    controllers: [controller],
    leaderElection: {
      // watch: a standby takes the Lease the moment the leader releases it at its stop (not at its next retry).
      lock: new LeaseLock({ client: kubeConfig.makeApiClient(CoordinationV1Api), namespace: NAMESPACE, name: NAME, identity: IDENTITY, watch: new Watch(kubeConfig) }),
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
    gracefulShutdownTimeoutMs: STOP_GRACE_MS,
    logger,
  });
}
