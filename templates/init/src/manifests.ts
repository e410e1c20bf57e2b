// What `npm run manifests` turns into YAML: the Manager (its RBAC, config/rbac/){{manifestsCrdNote}}{{manifestsWebhookNote}}.

import { KubeConfig } from '@kubernetes/client-node';
import { createManager } from './manager.js';
// @if crdPlain
export { {{plural}} } from './crd.js';
// @end
// @if crdConversionFile
import { crdWithConversion } from './webhooks.js';
// @end
// @if admissionManifests
import { webhookConfigurations } from './webhooks.js';
// @end

/** A cluster that is never called: reading what the Manager needs makes no request, and needs no kubeconfig. */
const nowhere = new KubeConfig();
nowhere.loadFromOptions({
  clusters: [{ name: 'manifests', server: 'https://manifests.invalid' }],
  users: [{ name: 'manifests' }],
  contexts: [{ name: 'manifests', cluster: 'manifests', user: 'manifests' }],
  currentContext: 'manifests',
});

/** The Manager as main.ts runs it: `kube-informer rbac` derives the least-privilege rules from it. */
export const manager = createManager(nowhere, false);
// @if crdConversionFile

/** The CRD with its conversion webhook; cert-manager's CA injector fills in its `caBundle`. */
export const definition = { crd: crdWithConversion() };
// @end
// @if admissionManifests

/** The webhook configurations; cert-manager's CA injector fills in their `caBundle`. */
export const configurations = webhookConfigurations();
// @end
