// The default plural of a kind: controller-gen's (flect's) answer, word for word, and where apimachinery's guess differs.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Type, defaultPlural, defineCustomResource } from '../../src/crd/index.js';

/** [kind, our plural = controller-gen's, apimachinery's UnsafeGuessKindToResource]. */
const TABLE: [string, string, string][] = [
  ['NetworkPolicy', 'networkpolicies', 'networkpolicies'],
  ['GatewayClass', 'gatewayclasses', 'gatewayclasses'],
  ['Policy', 'policies', 'policies'],
  ['Class', 'classes', 'classes'],
  ['Ingress', 'ingresses', 'ingresses'],
  ['Status', 'statuses', 'statuses'],
  ['Endpoints', 'endpoints', 'endpoints'],
  ['Proxy', 'proxies', 'proxies'],
  ['HTTPRoute', 'httproutes', 'httproutes'],
  ['Widget', 'widgets', 'widgets'],
  ['Prometheus', 'prometheuses', 'prometheuses'],
  ['Alertmanager', 'alertmanagers', 'alertmanagers'],
  ['CertificateRequest', 'certificaterequests', 'certificaterequests'],
  ['DNS', 'dnses', 'dnses'],
  ['API', 'apis', 'apis'],
  ['S3Bucket', 's3buckets', 's3buckets'],
  // Where the two differ we follow controller-gen (flect), mostly the English one, so a kubebuilder project's CRD keeps its name.
  ['Key', 'keys', 'keies'],
  ['Day', 'days', 'daies'],
  ['Gateway', 'gateways', 'gatewaies'],
  ['Box', 'boxes', 'boxs'],
  ['Sandbox', 'sandboxes', 'sandboxs'],
  ['Prefix', 'prefixes', 'prefixs'],
  ['Batch', 'batches', 'batchs'],
  ['Mesh', 'meshes', 'meshs'],
  ['Quiz', 'quizzes', 'quizs'],
  ['Hero', 'heroes', 'heros'],
  // Not always the English one: flect has no rule for -eo. We still follow it (the CRD name must be controller-gen's); `names.plural` chooses another.
  ['Video', 'videoes', 'videos'],
  ['Price', 'price', 'prices'],
  ['Leaf', 'leaves', 'leafs'],
  ['Knife', 'knives', 'knifes'],
  ['Person', 'people', 'persons'],
  ['SalesPerson', 'salespeople', 'salespersons'],
  ['Child', 'children', 'childs'],
  ['Analysis', 'analyses', 'analysises'],
  ['Axis', 'axes', 'axises'],
  ['Alias', 'aliases', 'aliases'],
  ['IPAlias', 'ipaliases', 'ipaliases'],
  ['Index', 'indices', 'indexs'],
  ['Matrix', 'matrices', 'matrixs'],
  ['Datum', 'data', 'datums'],
  ['Criterion', 'criteria', 'criterions'],
  ['Sheep', 'sheep', 'sheeps'],
  ['Series', 'series', 'serieses'],
  ['Information', 'information', 'informations'],
  ['Data', 'data', 'datas'],
  ['ID', 'ids', 'ids'],
];

describe('defaultPlural', () => {
  it.each(TABLE)('%s → %s (controller-gen), where apimachinery guesses %s', (kind, plural) => {
    expect(defaultPlural(kind)).toBe(plural);
  });

  it('gives controller-gen\'s plural for every kind in the fixture (flect v1.0.3 run over 2 000 kinds and words), but for lower-case acronyms ending in S', () => {
    const rows = readFileSync(new URL('fixtures/plurals.tsv', import.meta.url), 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split('\t'));
    expect(rows.length).toBeGreaterThan(2000);
    const differ = rows.filter(([kind, flect]) => defaultPlural(kind) !== flect).map(([kind, flect]) => `${kind}: flect ${flect}, ours ${defaultPlural(kind)}`);
    // flect's suffix replacement misses when the acronym is written in lower case and doubles the word; apimachinery gives ours.
    expect(differ).toEqual(['Aes: flect aesaeses, ours aeses', 'Dns: flect dnsdnses, ours dnses']);
    expect(rows.filter(([kind, , guess]) => defaultPlural(kind) !== guess).length, 'apimachinery differs on some').toBeGreaterThan(100);
  });

  it('is the plural defineCustomResource writes when names.plural is not given, and an explicit plural wins', () => {
    const spec = Type.Object({ a: Type.String() });
    const policies = defineCustomResource({ group: 'a.example.com', names: { kind: 'NetworkPolicy' }, versions: { v1: { spec } } });
    expect(policies.crd.metadata?.name).toBe('networkpolicies.a.example.com');
    expect(policies.crd.spec.names.plural).toBe('networkpolicies');
    expect(policies.descriptor.resource).toBe('networkpolicies');
    const classes = defineCustomResource({ group: 'a.example.com', names: { kind: 'GatewayClass' }, versions: { v1: { spec } } });
    expect(classes.crd.metadata?.name).toBe('gatewayclasses.a.example.com');
    const old = defineCustomResource({ group: 'a.example.com', names: { kind: 'NetworkPolicy', plural: 'networkpolicys' }, versions: { v1: { spec } } });
    expect(old.crd.metadata?.name).toBe('networkpolicys.a.example.com');
  });
});
