import { describe, expect, it } from 'vitest';
import { type AdmissionRule, crdConversion, manifestList, mutatingWebhookConfiguration, validatingWebhookConfiguration } from '../../src/webhook/index.js';

const rules: AdmissionRule[] = [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['configmapsets'], scope: 'Namespaced' }];

describe('registration manifests', () => {
  it('builds a ValidatingWebhookConfiguration with the defaults spelled out and the caBundle', () => {
    const config = validatingWebhookConfiguration({
      name: 'configmapsets',
      endpoint: { url: 'https://127.0.0.1:9443/' },
      caBundle: 'Q0E=',
      webhooks: [{ name: 'vcms.example.com', path: '/validate', rules, namespaceSelector: { matchLabels: { team: 'a' } }, objectSelector: { matchLabels: { managed: 'yes' } } }],
    });
    expect(config).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'configmapsets' },
      webhooks: [
        {
          name: 'vcms.example.com',
          clientConfig: { url: 'https://127.0.0.1:9443/validate', caBundle: 'Q0E=' },
          rules,
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 10,
          namespaceSelector: { matchLabels: { team: 'a' } },
          objectSelector: { matchLabels: { managed: 'yes' } },
        },
      ],
    });
  });

  it('builds a MutatingWebhookConfiguration for an in-cluster Service, with the policies given', () => {
    const config = mutatingWebhookConfiguration({
      name: 'defaults',
      endpoint: { service: { namespace: 'system', name: 'operator-webhook' } },
      metadata: { annotations: { 'cert-manager.io/inject-ca-from': 'system/operator-cert' } },
      webhooks: [{ name: 'mcms.example.com', path: '/mutate', rules, failurePolicy: 'Ignore', matchPolicy: 'Exact', sideEffects: 'NoneOnDryRun', timeoutSeconds: 5, reinvocationPolicy: 'IfNeeded' }],
    });
    expect(config.metadata).toEqual({ name: 'defaults', annotations: { 'cert-manager.io/inject-ca-from': 'system/operator-cert' } });
    expect(config.webhooks![0]).toMatchObject({
      clientConfig: { service: { namespace: 'system', name: 'operator-webhook', port: 443, path: '/mutate' } },
      failurePolicy: 'Ignore',
      matchPolicy: 'Exact',
      sideEffects: 'NoneOnDryRun',
      timeoutSeconds: 5,
      reinvocationPolicy: 'IfNeeded',
    });
    expect(config.webhooks![0]!.clientConfig.caBundle).toBeUndefined();
  });

  it('refuses an http:// URL and a timeoutSeconds outside 1..30', () => {
    expect(() => validatingWebhookConfiguration({ name: 'x', endpoint: { url: 'http://127.0.0.1' }, webhooks: [{ name: 'a.b', path: '/v', rules }] })).toThrow(/https/);
    expect(() => validatingWebhookConfiguration({ name: 'x', endpoint: { url: 'https://h' }, webhooks: [{ name: 'a.b', path: '/v', rules, timeoutSeconds: 31 }] })).toThrow(/timeoutSeconds/);
  });

  it('builds the CRD conversion stanza and a kubectl-applicable List', () => {
    const conversion = crdConversion({ endpoint: { url: 'https://127.0.0.1:9443' }, path: '/convert', caBundle: 'Q0E=' });
    expect(conversion).toEqual({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' }, conversionReviewVersions: ['v1'] } });
    expect(JSON.parse(manifestList([conversion]))).toEqual({ apiVersion: 'v1', kind: 'List', items: [conversion] });
  });
});
