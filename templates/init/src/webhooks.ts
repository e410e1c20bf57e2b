// The {{Kind}} webhooks, served over HTTPS by one WebhookServer that the Manager runs: {{webhookList}}.

// @if selfManaged
import type { KubeConfig } from '@kubernetes/client-node';
// @end
// @if conversion
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
// @end
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
// @if validating
import type { FieldError } from 'kube-informer/crd';
// @end
import type { LoggerOption } from 'kube-informer';
import {
// @if conversion
  conversionWebhook,
// @end
// @if conversion
  crdConversion,
// @end
// @if defaulting
  defaultingWebhook,
  mutatingWebhookConfiguration,
// @end
// @if validating
  validatingWebhookConfiguration,
  validationWebhook,
// @end
  WebhookServer,
} from 'kube-informer/webhook';
// @if conversion
import { {{plural}}, type {{Kind}}, type {{Kind}}V1alpha1 } from './crd.js';
// @else
import { {{plural}} } from './crd.js';
// @end
// @if certManager
import { CERT_DIR, CERTIFICATE, NAME, WEBHOOK_PORT, WEBHOOK_SERVICE } from './settings.js';
// @else
import { NAME, WEBHOOK_PORT, WEBHOOK_SERVICE } from './settings.js';
// @end
// @if validating

/** Refuses what the schema cannot say: a message of blanks only. The schema's own rules run first. */
export const validate{{Kind}} = validationWebhook({{plural}}, (req) => {
  const errors: FieldError[] = [];
  const message = (req.object as { spec: { message?: string } }).spec.message;
  if (message !== undefined && message.trim() === '') errors.push({ field: 'spec.message', type: 'FieldValueInvalid', message: 'must not be blank' });
  return errors;
});
// @end
// @if defaulting

/** Trims the message before it is stored (the schema's defaults are applied first). */
export const default{{Kind}} = defaultingWebhook({{plural}}, (req) => {
  const object = req.object as { spec: { message?: string } } | undefined;
  if (object?.spec.message !== undefined) object.spec.message = object.spec.message.trim();
});
// @end
// @if conversion

/** Converts {{Kind}}s between v1 (the hub, stored) and v1alpha1 (`text` is v1's `message`), lossless both ways. */
export const convert{{Kind}} = conversionWebhook<{ v1: {{Kind}}; v1alpha1: {{Kind}}V1alpha1 }, 'v1'>({
  name: '{{plural}}.{{group}}',
  group: '{{group}}',
  hub: 'v1',
  spokes: {
    v1alpha1: {
      toHub: (old) => ({ ...old, spec: { message: old.spec.text } }),
      fromHub: (v1) => ({ ...v1, spec: { text: v1.spec.message } }),
    },
  },
  servedVersions: ['v1', 'v1alpha1'],
});
// @end

/** The paths the webhooks are served at. */
export const PATHS = {
// @if validating
  validate: '/validate-{{plural}}',
// @end
// @if defaulting
  default: '/default-{{plural}}',
// @end
// @if conversion
  convert: '/convert-{{plural}}',
// @end
} as const;

// @if certManager
/** cert-manager's CA injector fills in every `caBundle` from this Certificate. */
const annotations = { 'cert-manager.io/inject-ca-from': CERTIFICATE };

// @end
/** The webhook configurations that send {{Kind}} writes to this server, through the Service. */
export function webhookConfigurations(): Array<ValidatingWebhookConfiguration | MutatingWebhookConfiguration> {
  const endpoint = { service: WEBHOOK_SERVICE };
  const configurations: Array<ValidatingWebhookConfiguration | MutatingWebhookConfiguration> = [];
// @if validating
  configurations.push(
    validatingWebhookConfiguration({
      name: `${NAME}-validating`,
      endpoint,
// @if certManager
      metadata: { annotations },
// @end
      webhooks: [{ name: validate{{Kind}}.name, path: PATHS.validate, rules: validate{{Kind}}.rules }],
    }),
  );
// @end
// @if defaulting
  configurations.push(
    mutatingWebhookConfiguration({
      name: `${NAME}-defaulting`,
      endpoint,
// @if certManager
      metadata: { annotations },
// @end
      webhooks: [{ name: default{{Kind}}.name, path: PATHS.default, rules: default{{Kind}}.rules }],
    }),
  );
// @end
  return configurations;
}

// @if conversion
/**
 * The CRD with its `spec.conversion` pointing at this server's conversion path, through the Service
 * (`caBundle`: the CA that signed the server's certificate; omitted when cert-manager injects it).
 */
export function crdWithConversion(caBundle?: string): CustomResourceDefinition {
  const conversion = crdConversion({ endpoint: { service: WEBHOOK_SERVICE }, path: PATHS.convert, caBundle });
// @if certManager
  const metadata = { ...{{plural}}.crd.metadata, annotations };
// @else
  const metadata = {{plural}}.crd.metadata;
// @end
  return { ...{{plural}}.crd, metadata, spec: { ...{{plural}}.crd.spec, conversion } };
}
// @end

/**
// @if certManager
 * The webhook server: HTTPS with the certificate cert-manager writes into the mounted Secret (re-read
 * when it rotates). The configurations are applied with the manifests (`npm run manifests`).
// @else
 * The webhook server: HTTPS with a certificate of its own (a self-signed CA generated at start for the
 * Service's DNS names); once it serves, it applies the webhook configurations with that CA, so no
 * certificate manager is needed. Every replica generates its own CA: run one replica.
// @end
 */
// @if certManager
export function webhookServer(logger?: LoggerOption): WebhookServer {
  const server = new WebhookServer({
    tls: { certFile: `${CERT_DIR}/tls.crt`, keyFile: `${CERT_DIR}/tls.key` },
    port: WEBHOOK_PORT,
    logger,
  });
// @else
export function webhookServer(kubeConfig: KubeConfig, logger?: LoggerOption): WebhookServer {
  const { namespace, name } = WEBHOOK_SERVICE;
  const server = new WebhookServer({
    tls: { selfSigned: { hosts: [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`] } },
    port: WEBHOOK_PORT,
    configurations: { objects: webhookConfigurations(), kubeConfig, fieldManager: NAME },
    logger,
  });
// @end
// @if validating
  server.register(PATHS.validate, validate{{Kind}});
// @end
// @if defaulting
  server.register(PATHS.default, default{{Kind}});
// @end
// @if conversion
  server.register(PATHS.convert, convert{{Kind}});
// @end
  return server;
}
