// Registration manifests: Validating/MutatingWebhookConfiguration objects and a CRD's `conversion` stanza, pointing at the webhook server.

import type {
  MutatingWebhook,
  MutatingWebhookConfiguration,
  ValidatingWebhook,
  ValidatingWebhookConfiguration,
  WebhookClientConfig,
} from 'kubernetes-types/admissionregistration/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { stringify } from 'yaml';
import { ErrorCodes, KubeInformerError, validateOptions } from '../core/index.js';

/** Where the API server reaches the webhook server: a URL base (`https://host:port`) or an in-cluster Service. */
export type WebhookEndpoint = WebhookUrlEndpoint | WebhookServiceEndpoint;

/** The webhook server at a URL: the API server calls `url` + the webhook's path. */
export interface WebhookUrlEndpoint {
  /** `https://host:port` (https only). */
  url: string;
}

/** The webhook server behind an in-cluster Service. */
export interface WebhookServiceEndpoint {
  /** The Service. */
  service: {
    /** Its namespace. */
    namespace: string;
    /** Its name. */
    name: string;
    /** Its port. Default: 443. */
    port?: number;
  };
}

/**
 * Which requests a webhook is called for (admissionregistration/v1 `RuleWithOperations`; kubernetes-types
 * leaves out its inlined `resources` and `scope`, so it is spelled out here).
 */
export interface AdmissionRule {
  /** `CREATE`, `UPDATE`, `DELETE`, `CONNECT`, or `['*']`. */
  operations: Array<'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*'>;
  /** API groups (`''` for the core group), or `['*']`. */
  apiGroups: string[];
  /** Versions, or `['*']`. */
  apiVersions: string[];
  /** Resources (`'configmaps'`, `'pods/status'`, or `'*'` for all). */
  resources: string[];
  /** `'Cluster'`, `'Namespaced'` or `'*'`. Default (the API server's): `'*'`. */
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** One webhook of a configuration: what it matches and how the API server calls it. */
export interface AdmissionRegistration {
  /** `webhooks[].name`: a domain-qualified name, e.g. `'vconfigmapset.example.com'` (also the webhook's name). Required. */
  name: string;
  /** The path it is registered at on the server, e.g. `'/validate-configmapsets'`. Required. */
  path: string;
  /** The operations and resources it is called for. Required. */
  rules: AdmissionRule[];
  /** What the API server does when the webhook cannot be called or fails: `'Fail'` rejects, `'Ignore'` admits. Default: `'Fail'`. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** `'Equivalent'` also sends requests made at other versions of the same resource (converted); `'Exact'` does not. Default: `'Equivalent'`. */
  matchPolicy?: 'Exact' | 'Equivalent';
  /** `'None'`, or `'NoneOnDryRun'` when the handler has side effects that it skips on `dryRun`. Default: `'None'`. */
  sideEffects?: 'None' | 'NoneOnDryRun';
  /** Seconds the API server waits (1–30); the server answers a margin before. Default: 10. */
  timeoutSeconds?: number;
  /** Only objects in namespaces matching this selector. Default: all. */
  namespaceSelector?: LabelSelector;
  /** Only objects whose labels match this selector. Default: all. */
  objectSelector?: LabelSelector;
  /** Mutating only: `'IfNeeded'` calls the webhook again when a later mutation changed the object. Default: `'Never'`. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** Options of {@link validatingWebhookConfiguration} and {@link mutatingWebhookConfiguration}. */
export interface WebhookConfigurationOptions {
  /** The configuration's `metadata.name`. Required. */
  name: string;
  /** Where the server is reached. Required. */
  endpoint: WebhookEndpoint;
  /** The CA bundle (base64 PEM): {@link WebhookServer.caBundle}. Omit when cert-manager's CA injector fills it. */
  caBundle?: string;
  /** The webhooks. Required. */
  webhooks: AdmissionRegistration[];
  /** Labels and annotations of the configuration (e.g. `cert-manager.io/inject-ca-from`). Default: none. */
  metadata?: {
    /** Labels. */
    labels?: Record<string, string>;
    /** Annotations. */
    annotations?: Record<string, string>;
  };
}

function clientConfig(endpoint: WebhookEndpoint, path: string, caBundle: string | undefined): WebhookClientConfig {
  const ca = caBundle === undefined ? {} : { caBundle };
  if ('url' in endpoint) {
    if (!endpoint.url.startsWith('https://')) throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, `webhook endpoint ${endpoint.url}: the API server calls webhooks over https only`);
    return { url: endpoint.url.replace(/\/$/, '') + path, ...ca };
  }
  return { service: { namespace: endpoint.service.namespace, name: endpoint.service.name, port: endpoint.service.port ?? 443, path }, ...ca };
}

const CONFIGURATION_SCHEMA = {
  name: 'string',
  endpoint: 'object',
  caBundle: 'string',
  webhooks: 'any', // an array: each registration is read field by field
  metadata: { labels: 'object', annotations: 'object' },
} as const;

function common(w: AdmissionRegistration, options: WebhookConfigurationOptions): ValidatingWebhook {
  const timeoutSeconds = w.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, `webhook ${w.name}: timeoutSeconds must be a whole number from 1 to 30, got ${timeoutSeconds}`);
  }
  return {
    name: w.name,
    clientConfig: clientConfig(options.endpoint, w.path, options.caBundle),
    rules: w.rules,
    failurePolicy: w.failurePolicy ?? 'Fail',
    matchPolicy: w.matchPolicy ?? 'Equivalent',
    sideEffects: w.sideEffects ?? 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds,
    ...(w.namespaceSelector ? { namespaceSelector: w.namespaceSelector } : {}),
    ...(w.objectSelector ? { objectSelector: w.objectSelector } : {}),
  };
}

/** A `ValidatingWebhookConfiguration` for the given webhooks: apply it at start, or print it (`JSON.stringify`) for kubectl. */
export function validatingWebhookConfiguration(options: WebhookConfigurationOptions): ValidatingWebhookConfiguration {
  validateOptions('validatingWebhookConfiguration', options, CONFIGURATION_SCHEMA);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: options.name, ...options.metadata },
    webhooks: options.webhooks.map((w) => common(w, options)),
  };
}

/** A `MutatingWebhookConfiguration` for the given webhooks (`reinvocationPolicy` honoured). */
export function mutatingWebhookConfiguration(options: WebhookConfigurationOptions): MutatingWebhookConfiguration {
  validateOptions('mutatingWebhookConfiguration', options, CONFIGURATION_SCHEMA);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: options.name, ...options.metadata },
    webhooks: options.webhooks.map((w): MutatingWebhook => ({ ...common(w, options), reinvocationPolicy: w.reinvocationPolicy ?? 'Never' })),
  };
}

/** Options of {@link crdConversion}. */
export interface CrdConversionOptions {
  /** Where the server is reached. Required. */
  endpoint: WebhookEndpoint;
  /** The path the conversion webhook is registered at, e.g. `'/convert'`. Required. */
  path: string;
  /** The CA bundle (base64 PEM). Omit when cert-manager's CA injector fills it. */
  caBundle?: string;
}

/** The `spec.conversion` of a CustomResourceDefinition whose versions the conversion webhook converts. */
export interface CrdConversion {
  /** Always `'Webhook'`. */
  strategy: 'Webhook';
  /** How the API server calls the webhook. */
  webhook: {
    /** Where and how to call it (url or service, and caBundle). */
    clientConfig: WebhookClientConfig;
    /** `['v1']`. */
    conversionReviewVersions: string[];
  };
}

/** The CRD `spec.conversion` stanza: `{ strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: ['v1'] } }`. */
export function crdConversion(options: CrdConversionOptions): CrdConversion {
  validateOptions('crdConversion', options, { endpoint: 'object', path: 'string', caBundle: 'string' });
  return { strategy: 'Webhook', webhook: { clientConfig: clientConfig(options.endpoint, options.path, options.caBundle), conversionReviewVersions: ['v1'] } };
}

/** Objects as one kubectl-applicable JSON document (a `v1` `List`): `kubectl apply -f -` takes it (YAML needs no extra dependency this way). */
export function manifestList(objects: readonly object[]): string {
  return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`;
}

/** Objects as YAML documents (`---` between them), as `kubectl apply -f` and Helm charts take them. */
export function manifestYaml(objects: readonly object[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}
