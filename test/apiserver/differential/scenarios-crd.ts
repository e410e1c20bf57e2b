// Differential scenarios over CustomResourceDefinitions: install and Established, structural schemas (defaults, pruning, validation), generation, status and scale subresources, deletion.

import type { Scenario } from './scenario.js';
import type { Wire } from './wire.js';

const GROUP = 'diff.example.com';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const widgets = (ns: string, name?: string, sub?: string): string =>
  `/apis/${GROUP}/v1/namespaces/${ns}/widgets${name === undefined ? '' : `/${name}`}${sub === undefined ? '' : `/${sub}`}`;
const gadgets = (name?: string): string => `/apis/${GROUP}/v1/gadgets${name === undefined ? '' : `/${name}`}`;
const MERGE = 'application/merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

const widgetSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', default: 1, minimum: 0 },
        color: { type: 'string', enum: ['red', 'blue'] },
        replicas: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        when: { type: 'string', format: 'date-time' },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: {
      type: 'object',
      properties: { replicas: { type: 'integer' }, phase: { type: 'string' }, observedGeneration: { type: 'integer' } },
    },
  },
};

function crd(plural: string, kind: string, scope: 'Namespaced' | 'Cluster', subresources: Record<string, unknown> | undefined, schema: unknown = widgetSchema, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...(subresources === undefined ? {} : { subresources }), ...extra }],
    },
  };
}

/** Waits (unrecorded) until the server serves `path`: the real server takes a moment after a CRD is created. */
async function served(w: Wire, path: string): Promise<void> {
  const a = await w.until({ path }, (x) => x.status === 200);
  if (a.status !== 200) throw new Error(`${w.endpoint.name} never served ${path}: ${a.status} ${JSON.stringify(a.body)}`);
}

const widget = (ns: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: ns },
  ...extra,
});

export const crdScenarios: Scenario[] = [
  {
    name: 'custom resources',
    run: async (w, ns) => {
      await w.req('create the widgets CRD', {
        method: 'POST',
        path: CRDS,
        body: crd('widgets', 'Widget', 'Namespaced', { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } }, widgetSchema, { selectableFields: [{ jsonPath: '.spec.color' }] }),
      });
      // Established before the next create: the real server's status writes are asynchronous, and the order of resource versions is compared.
      await w.until({ path: `${CRDS}/widgets.${GROUP}` }, (a) => JSON.stringify(a.body?.status?.conditions ?? []).includes('"Established","status":"True"'), 10_000);
      await w.req('create the gadgets CRD', { method: 'POST', path: CRDS, body: crd('gadgets', 'Gadget', 'Cluster', undefined) });
      await w.until({ path: `${CRDS}/gadgets.${GROUP}` }, (a) => JSON.stringify(a.body?.status?.conditions ?? []).includes('"Established","status":"True"'), 10_000);
      await served(w, widgets(ns));
      await served(w, gadgets());
      await w.req('get the CRD once served', { path: `${CRDS}/widgets.${GROUP}` });
      await w.req('list the CRDs of the group', { path: CRDS, query: { fieldSelector: `metadata.name=widgets.${GROUP}` } });
      await w.req('create the CRD again', { method: 'POST', path: CRDS, body: crd('widgets', 'Widget', 'Namespaced', undefined) });
      await w.req('a CRD whose name is not plural.group', { method: 'POST', path: CRDS, query: { dryRun: 'All' }, body: { ...crd('things', 'Thing', 'Namespaced', undefined), metadata: { name: 'wrong.example.com' } } });
      const settings = { type: 'object', required: ['compress'], properties: { compress: { type: 'boolean', default: true } }, default: {} };
      await w.req('a CRD whose object default lacks a required member', { method: 'POST', path: CRDS, query: { dryRun: 'All' }, body: crd('archives', 'Archive', 'Namespaced', undefined, { type: 'object', properties: { spec: { type: 'object', properties: { settings } } } }) });
      await w.req('a CRD with a non-structural schema', { method: 'POST', path: CRDS, query: { dryRun: 'All' }, body: crd('loose', 'Loose', 'Namespaced', undefined, { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }) });

      await w.req('create', { method: 'POST', path: widgets(ns), body: widget(ns, 'w1', { spec: { size: 1, replicas: 2, free: { kept: true } } }) });
      await w.req('get', { path: widgets(ns, 'w1') });
      const got = await w.raw({ path: widgets(ns, 'w1') });
      const base = got.body as Record<string, any>;  
      await w.req('update of spec bumps generation', { method: 'PUT', path: widgets(ns, 'w1'), body: { ...base, spec: { ...base.spec, size: 3 } } });
      const g2 = (await w.raw({ path: widgets(ns, 'w1') })).body as Record<string, any>;  
      await w.req('update of labels keeps generation', { method: 'PUT', path: widgets(ns, 'w1'), body: { ...g2, metadata: { ...g2.metadata, labels: { l: '1' } } } });
      const g3 = (await w.raw({ path: widgets(ns, 'w1') })).body as Record<string, any>;  
      await w.req('update of status', { method: 'PUT', path: widgets(ns, 'w1', 'status'), body: { ...g3, spec: { size: 99 }, status: { phase: 'Ready', replicas: 2, observedGeneration: 2 } } });
      await w.req('merge patch of status', { method: 'PATCH', path: widgets(ns, 'w1', 'status'), contentType: MERGE, body: { status: { phase: 'Patched' } } });
      await w.req('merge patch of spec and labels', { method: 'PATCH', path: widgets(ns, 'w1'), contentType: MERGE, body: { metadata: { labels: { l: '2' } }, spec: { color: 'red' } } });
      await w.req('get status', { path: widgets(ns, 'w1', 'status') });
      await w.req('apply creates w2', { method: 'PATCH', path: widgets(ns, 'w2'), contentType: APPLY, query: { fieldManager: 'ctl' }, body: widget(ns, 'w2', { spec: { size: 1, tags: ['a'], color: 'blue' } }) });
      await w.req('apply of status', { method: 'PATCH', path: widgets(ns, 'w2', 'status'), contentType: APPLY, query: { fieldManager: 'ctl' }, body: widget(ns, 'w2', { status: { phase: 'Applied' } }) });
      await w.req('list', { path: widgets(ns) });
      await w.req('list across namespaces', { path: `/apis/${GROUP}/v1/widgets`, query: { fieldSelector: `metadata.namespace=${ns}` } });
      await w.req('a finalizer', { method: 'PATCH', path: widgets(ns, 'w2'), contentType: MERGE, body: { metadata: { finalizers: ['example.com/hold'] } } });
      await w.req('delete marks it and bumps generation', { method: 'DELETE', path: widgets(ns, 'w2') });
      await w.req('release it', { method: 'PATCH', path: widgets(ns, 'w2'), contentType: MERGE, body: { metadata: { finalizers: null } } });

      // What a schema does (the fake has none) and what a status subresource hides, each on its own object so nothing else inherits the difference.
      await w.req('create: defaults and pruning', { method: 'POST', path: widgets(ns), body: widget(ns, 'w0', { spec: { replicas: 2, extra: 'pruned' }, junk: 1 }) });
      await w.req('create: a status is dropped', { method: 'POST', path: widgets(ns), body: widget(ns, 'w3', { spec: { size: 1 }, status: { phase: 'ignored' } }) });
      const w3 = (await w.raw({ path: widgets(ns, 'w3') })).body as Record<string, any>;  
      await w.req('update of the main resource with a status', { method: 'PUT', path: widgets(ns, 'w3'), body: { ...w3, status: { phase: 'main' } } });
      await w.req('merge patch of the main resource with a status', { method: 'PATCH', path: widgets(ns, 'w3'), contentType: MERGE, body: { status: { phase: 'via-main' } } });
      await w.req('apply of status to the main resource', { method: 'PATCH', path: widgets(ns, 'w3'), contentType: APPLY, query: { fieldManager: 'ctl' }, body: widget(ns, 'w3', { spec: { size: 1 }, status: { phase: 'x' } }) });
      await w.req('a value of the wrong type', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad1', { spec: { size: 'big' } }) });
      await w.req('a value outside the enum', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad2', { spec: { size: 1, color: 'green' } }) });
      await w.req('a value below the minimum', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad3', { spec: { size: -1 } }) });
      await w.req('a date-time that is not one', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad4', { spec: { size: 1, when: 'yesterday' } }) });
      await w.req('an embedded object without kind', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad5', { spec: { size: 1, template: { apiVersion: 'v1' } } }) });
      await w.req('an embedded object whose metadata has an unknown field', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'e1', { spec: { size: 1, when: '2024-01-02T03:04:05Z', template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', bogus: 1 } } } }) });
      await w.req('a patch to an invalid value', { method: 'PATCH', path: widgets(ns, 'w1'), query: { dryRun: 'All' }, contentType: MERGE, body: { spec: { size: 'big' } } });
      // Two errors in one list (kube-apiserver reports errors of different properties in Go's random map order).
      await w.req('two invalid values', { method: 'POST', path: widgets(ns), query: { dryRun: 'All' }, body: widget(ns, 'bad4', { spec: { tags: [1, 'a', true] } }) });
      await w.req('a json patch to an invalid value', { method: 'PATCH', path: widgets(ns, 'w1'), query: { dryRun: 'All' }, contentType: 'application/json-patch+json', body: [{ op: 'add', path: '/spec/replicas', value: 'many' }] });
      await w.req('an apply of an invalid value', { method: 'PATCH', path: widgets(ns, 'bad5'), contentType: APPLY, query: { fieldManager: 'ctl', dryRun: 'All' }, body: widget(ns, 'bad5', { spec: { color: 'green' } }) });
      await w.req('an apply that prunes and defaults', { method: 'PATCH', path: widgets(ns, 'w5'), contentType: APPLY, query: { fieldManager: 'ctl' }, body: widget(ns, 'w5', { spec: { color: 'red' } }) });
      await w.req('an apply with an unknown field', { method: 'PATCH', path: widgets(ns, 'w6'), contentType: APPLY, query: { fieldManager: 'ctl', dryRun: 'All' }, body: widget(ns, 'w6', { spec: { color: 'blue', gone: 1 } }) });
      await w.req('a status update to an invalid value', { method: 'PATCH', path: widgets(ns, 'w1', 'status'), query: { dryRun: 'All' }, contentType: MERGE, body: { status: { replicas: 'many' } } });
      await w.req('a status update with unknown fields', { method: 'PATCH', path: widgets(ns, 'w1', 'status'), contentType: MERGE, body: { status: { phase: 'Pruned', unknown: 1 } } });
      await w.req('an update with an unknown field', { method: 'PATCH', path: widgets(ns, 'w1'), contentType: MERGE, body: { spec: { unknown: 1 }, other: { x: 1 } } });
      await w.req('a selectable field', { path: widgets(ns), query: { fieldSelector: 'spec.color=red' } });
      await w.req('a field the CRD does not select', { path: widgets(ns), query: { fieldSelector: 'spec.size=1' } });
      await w.req('metadata.name and a selectable field', { path: `/apis/${GROUP}/v1/widgets`, query: { fieldSelector: `metadata.name=w1,spec.color!=blue` } });
      await w.watch('a watch on a field the CRD does not select', { path: widgets(ns), query: { fieldSelector: 'status.phase=Ready' } }, 1);
      await w.req('get scale', { path: widgets(ns, 'w1', 'scale') });
      const scale = await w.raw({ path: widgets(ns, 'w1', 'scale') });
      await w.req('update scale', { method: 'PUT', path: widgets(ns, 'w1', 'scale'), body: { ...(scale.body as object), spec: { replicas: 5 } } });
      await w.req('merge patch of scale', { method: 'PATCH', path: widgets(ns, 'w1', 'scale'), contentType: MERGE, body: { spec: { replicas: 6 } } });
      await w.req('delete w1', { method: 'DELETE', path: widgets(ns, 'w1') });

      await w.req('create a gadget with a status', { method: 'POST', path: gadgets(), body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 2 }, status: { phase: 'kept' } } });
      const gadget = (await w.raw({ path: gadgets('g1') })).body as Record<string, any>;  
      await w.req('a status change without a status subresource', { method: 'PUT', path: gadgets('g1'), body: { ...gadget, status: { phase: 'changed' } } });
      await w.req('a status subresource that is not there', { path: `${gadgets('g1')}/status` });
      await w.req('a scale subresource that is not there', { path: `${gadgets('g1')}/scale` });
      await w.req('a gadget under a namespace', { path: `/apis/${GROUP}/v1/namespaces/${ns}/gadgets` });
      await w.req('metadata.namespace on a cluster-scoped resource', { path: gadgets(), query: { fieldSelector: `metadata.namespace=${ns}` } });

      // Deleting the CRD deletes its objects: a watch sees a DELETED event for each (w0, w3, w5), sent by the real server's cleanup controller.
      const listed = await w.raw({ path: widgets(ns) });
      const deleting = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 500)); // the watch is open by then
        await w.raw({ method: 'DELETE', path: `${CRDS}/widgets.${GROUP}` });
      })();
      await w.watch('the watch of its objects while the CRD is deleted', { path: widgets(ns), query: { resourceVersion: String(listed.body?.metadata?.resourceVersion) } }, 3, 20_000);
      await deleting;
      await w.until({ path: `${CRDS}/widgets.${GROUP}` }, (a) => a.status === 404);
      await w.until({ path: widgets(ns) }, (a) => a.status === 404, 10_000);
      await w.req('list after the CRD went', { path: widgets(ns) });
      await w.req('get the CRD after it went', { path: `${CRDS}/widgets.${GROUP}` });
      await w.req('delete the gadgets CRD', { method: 'DELETE', path: `${CRDS}/gadgets.${GROUP}` });
    },
  },
  {
    name: 'namespace deletion',
    run: async (w, ns) => {
      await w.req('create a configmap', { method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } });
      await w.req('delete the namespace', { method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
      await w.req('get the namespace', { path: `/api/v1/namespaces/${ns}` });
      await w.req('create in a terminating namespace', { method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd' } } });
      await w.req('get what was in it', { path: `/api/v1/namespaces/${ns}/configmaps/c` });
    },
  },
];
