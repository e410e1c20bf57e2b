// The webhook entry point (`kube-informer/webhook`): the HTTPS webhook server, admission and conversion webhooks, registration manifests.
export { WebhookServer } from './server.js';
export type { WebhookServerOptions } from './server.js';
export type { WebhookTlsOptions, WebhookTlsFiles, WebhookTlsSelfSigned } from './tls.js';
export { generateSelfSignedCertificates, issueServingCertificate } from './x509.js';
export type { SelfSignedOptions, SelfSignedCertificates, IssueServingCertificateOptions, ServingCertificate } from './x509.js';
export { allow, deny, validatingWebhook, mutatingWebhook } from './admission.js';
export { reviewAdmission } from './admission-review.js';
export type { AdmissionReviewInput, AdmissionReviewResult } from './admission-review.js';
export type {
  AdmissionOperation,
  AdmissionUserInfo,
  AdmissionRequest,
  AdmissionDecision,
  AdmissionStatus,
  DenyOptions,
  ResourceMatch,
  AdmissionWebhookOptions,
  ValidatingHandler,
  MutatingHandler,
} from './admission.js';
export { BadReviewError } from './review.js';
export type { Webhook, WebhookContext } from './review.js';
export { jsonPatchDiff } from '../core/index.js';
export { prometheusWebhookMetricsProvider, webhookMetricNames } from './metrics.js';
export type { WebhookMetricsProvider, PrometheusWebhookMetricsOptions } from './metrics.js';
export { conversionWebhook } from './conversion.js';
export type { ConversionWebhook, ConversionWebhookOptions, SpokeConverter } from './conversion.js';
export { validatingWebhookConfiguration, mutatingWebhookConfiguration, crdConversion, manifestList, manifestYaml } from './manifests.js';
export type { AdmissionRule, WebhookEndpoint, WebhookUrlEndpoint, WebhookServiceEndpoint, AdmissionRegistration, WebhookConfigurationOptions, CrdConversionOptions, CrdConversion } from './manifests.js';
export { defaultingWebhook, validationWebhook } from './definition.js';
export type { AnyVersionObject, DefinitionWebhook, DefinitionWebhookOptions, DefinitionDefaulter, DefinitionValidator } from './definition.js';
export type { WebhookConfigurationsOptions } from './apply.js';
