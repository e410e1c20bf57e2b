// What `npm run manifests` prints besides the RBAC: the CustomResourceDefinition (config/crd/){{manifestsWebhookNote}}.

// @if crdPlain
export { {{plural}} } from './crd.js';
// @end
// @if crdConversionFile
import { crdWithConversion } from './webhooks.js';

/** The CRD with its conversion webhook; cert-manager's CA injector fills in its `caBundle`. */
export const definition = { crd: crdWithConversion() };
// @end
// @if admissionManifests
import { webhookConfigurations } from './webhooks.js';

/** The webhook configurations; cert-manager's CA injector fills in their `caBundle`. */
export const configurations = webhookConfigurations();
// @end
