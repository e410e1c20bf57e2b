// The configmapset example's webhooks: validation beyond the schema, and the v1 <-> v2 conversion round trip.

import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing/random.js';
import { API_VERSION, configMapSetCrd, configMapSetDefinition, GROUP } from '../../examples/configmapset/crd.js';
import { configMapSetWebhookManifests, convertConfigMapSet, validateConfigMapSet } from '../../examples/configmapset/webhooks.js';
import { crdConversion } from '../../src/webhook/index.js';

const review = (object: unknown, operation = 'CREATE') => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u', kind: { group: GROUP, version: 'v1', kind: 'ConfigMapSet' }, resource: { group: GROUP, version: 'v1', resource: 'configmapsets' }, operation, userInfo: {}, object },
});
const ctx = { signal: new AbortController().signal, logger: { debug() {}, info() {}, warn() {}, error() {} } };
const set = (names: string[]) => ({ apiVersion: API_VERSION, kind: 'ConfigMapSet', metadata: { name: 'app', namespace: 'default' }, spec: { names, data: { k: 'v' } } });

describe('configmapset webhooks', () => {
  it('denies duplicate names with a field error pointing at the duplicate, and admits a valid set', async () => {
    const denied = (await validateConfigMapSet.review(review(set(['a', 'b', 'a'])), ctx)) as any;
    expect(denied.response).toMatchObject({ allowed: false, status: { code: 422, details: { causes: [{ field: 'spec.names[2]', reason: 'FieldValueDuplicate' }] } } });
    const ok = (await validateConfigMapSet.review(review(set(['a', 'b'])), ctx)) as any;
    expect(ok.response.allowed).toBe(true);
  });

  it("denies what the definition's schema refuses, with the API server's paths and messages, before its own rules", async () => {
    const denied = (await validateConfigMapSet.review(review(set(['ok', 'Not_A_Label', 'ok'])), ctx)) as any;
    expect(denied.response.allowed).toBe(false);
    expect(denied.response.status.details.causes).toEqual([
      expect.objectContaining({ field: 'spec.names[1]', reason: 'FieldValueInvalid', message: expect.stringContaining("spec.names[1] in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'") as string }),
    ]);
    const noSpec = (await validateConfigMapSet.review(review({ apiVersion: API_VERSION, kind: 'ConfigMapSet', metadata: { name: 'app', namespace: 'default' } }), ctx)) as any;
    expect(noSpec.response.status.details.causes).toEqual([expect.objectContaining({ field: 'spec', reason: 'FieldValueRequired' })]);
  });

  it('denies more than 50 ConfigMaps', async () => {
    const many = Array.from({ length: 51 }, (_, i) => `n${i}`);
    const denied = (await validateConfigMapSet.review(review(set(many)), ctx)) as any;
    expect(denied.response.status.message).toContain('at most 50 ConfigMaps, got 51');
  });

  it('round-trips v1 -> v2 -> v1 on 500 generated sets (seeded)', () => {
    const rnd = seededRandom(28);
    for (let i = 0; i < 500; i++) {
      const names = Array.from({ length: Math.floor(rnd() * 6) }, (_, k) => `n${k}-${Math.floor(rnd() * 100)}`);
      const v1 = set(names);
      const v2 = convertConfigMapSet.convert(v1, `${GROUP}/v2`);
      expect(v2).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { configMaps: names.map((name) => ({ name })) } });
      expect(convertConfigMapSet.convert(v2, API_VERSION)).toEqual(v1);
    }
  });

  it('the one definition gives the CRD: v1 stored; v2 served only with the conversion webhook', () => {
    expect(configMapSetDefinition.crd.metadata?.name).toBe(`configmapsets.${GROUP}`);
    const plain = configMapSetCrd();
    expect(plain.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v2', false, false], ['v1', true, true]]);
    expect(plain.spec.conversion).toBeUndefined();
    expect(plain.spec.versions[1].subresources).toEqual({ status: {} });
    const conversion = crdConversion({ endpoint: { url: 'https://127.0.0.1:9443' }, path: '/convert-configmapsets', caBundle: 'Q0E=' });
    const converted = configMapSetCrd(conversion);
    expect(converted.spec.versions.map((v) => [v.name, v.served])).toEqual([['v2', true], ['v1', true]]);
    expect(converted.spec.conversion).toEqual(conversion);
    expect(configMapSetDefinition.crd.spec.conversion).toBeUndefined(); // the definition itself is untouched
  });

  it('builds a configuration and a conversion stanza for one URL and CA', () => {
    const [config, crd] = configMapSetWebhookManifests('https://127.0.0.1:9443', 'Q0E=') as any[];
    expect(config.webhooks[0]).toMatchObject({ name: `vconfigmapset.${GROUP}`, clientConfig: { url: 'https://127.0.0.1:9443/validate-configmapsets', caBundle: 'Q0E=' }, failurePolicy: 'Fail' });
    expect(crd.conversion.webhook.clientConfig.url).toBe('https://127.0.0.1:9443/convert-configmapsets');
  });
});
