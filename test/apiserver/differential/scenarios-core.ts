// Differential scenarios over built-in resources (configmaps, namespaces): CRUD, patches, apply, finalizers, selectors, paging, watches, error answers.

import { jsonPatchDiff } from '../../../src/core/index.js';
import type { Scenario } from './scenario.js';

const cms = (ns: string, name?: string): string => `/api/v1/namespaces/${ns}/configmaps${name === undefined ? '' : `/${name}`}`;
const cm = (ns: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...((extra.metadata as object | undefined) ?? {}) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata')),
});
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

/** Creates the scenario's namespace (compared too). */
export const createNamespace: Scenario['run'] = async (w, ns) => {
  await w.req('create namespace', { method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
};

export const coreScenarios: Scenario[] = [
  {
    name: 'namespaces',
    run: async (w, ns) => {
      await w.req('get', { path: `/api/v1/namespaces/${ns}` });
      await w.req('list by name', { path: '/api/v1/namespaces', query: { fieldSelector: `metadata.name=${ns}` } });
      await w.req('create again', { method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
      await w.req('create in a missing namespace', { method: 'POST', path: cms(`${ns}-missing`), query: { dryRun: 'All' }, body: cm(`${ns}-missing`, 'a') });
      await w.req('get a missing namespace', { path: `/api/v1/namespaces/${ns}-missing` });
    },
  },
  {
    name: 'create, get, update, delete',
    run: async (w, ns) => {
      const created = await w.req('create', { method: 'POST', path: cms(ns), body: cm(ns, 'a', { data: { k: 'v' } }) });
      await w.req('get', { path: cms(ns, 'a') });
      await w.req('create again', { method: 'POST', path: cms(ns), body: cm(ns, 'a') });
      const rv = String(created.body?.metadata?.resourceVersion);
      const updated = await w.req('update', { method: 'PUT', path: cms(ns, 'a'), body: cm(ns, 'a', { metadata: { resourceVersion: rv }, data: { k: 'v2' } }) });
      await w.req('update with a stale resourceVersion', { method: 'PUT', path: cms(ns, 'a'), body: cm(ns, 'a', { metadata: { resourceVersion: rv }, data: { k: 'v3' } }) });
      await w.req('update without a resourceVersion', { method: 'PUT', path: cms(ns, 'a'), body: cm(ns, 'a', { data: { k: 'v4' } }) });
      await w.req('update that changes nothing', { method: 'PUT', path: cms(ns, 'a'), body: cm(ns, 'a', { data: { k: 'v4' } }) });
      await w.req('update of a missing object', { method: 'PUT', path: cms(ns, 'missing'), body: cm(ns, 'missing') });
      await w.req('update with another name in the body', { method: 'PUT', path: cms(ns, 'a'), body: cm(ns, 'b') });
      await w.req('create with another namespace in the body', { method: 'POST', path: cms(ns), body: cm('elsewhere', 'c') });
      await w.req('create without a name', { method: 'POST', path: cms(ns), body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } });
      await w.req('create with an invalid name', { method: 'POST', path: cms(ns), query: { dryRun: 'All' }, body: cm(ns, 'Not_Valid') });
      await w.req('create with an invalid data key', { method: 'POST', path: cms(ns), query: { dryRun: 'All' }, body: cm(ns, 'badkey', { data: { 'a b': 'x' } }) });
      await w.req('create with a wrong kind', { method: 'POST', path: cms(ns), query: { dryRun: 'All' }, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong-kind' } } });
      await w.req('create with generateName', { method: 'POST', path: cms(ns), body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } } });
      await w.req('create with a body that is not JSON', { method: 'POST', path: cms(ns), body: '{not json' });
      await w.req('dry-run create', { method: 'POST', path: cms(ns), query: { dryRun: 'All' }, body: cm(ns, 'dry') });
      await w.req('get of the dry-run object', { path: cms(ns, 'dry') });
      await w.req('get of a missing object', { path: cms(ns, 'missing') });
      await w.req('delete with a wrong uid precondition', { method: 'DELETE', path: cms(ns, 'a'), body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } } });
      await w.req('delete with a stale resourceVersion precondition', { method: 'DELETE', path: cms(ns, 'a'), body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: rv } } });
      const current = String(updated.body?.metadata?.resourceVersion);
      void current;
      await w.req('delete', { method: 'DELETE', path: cms(ns, 'a') });
      await w.req('delete again', { method: 'DELETE', path: cms(ns, 'a') });
      await w.req('get after delete', { path: cms(ns, 'a') });
      await w.req('list', { path: cms(ns) });
    },
  },
  {
    name: 'patches',
    run: async (w, ns) => {
      await w.req('create', { method: 'POST', path: cms(ns), body: cm(ns, 'p', { metadata: { labels: { a: '1' } }, data: { x: '1', y: '2' } }) });
      await w.req('merge patch', { method: 'PATCH', path: cms(ns, 'p'), contentType: MERGE, body: { data: { x: '10', y: null, z: '3' } } });
      await w.req('merge patch of labels', { method: 'PATCH', path: cms(ns, 'p'), contentType: MERGE, body: { metadata: { labels: { b: '2', a: null } } } });
      await w.req('strategic merge patch', { method: 'PATCH', path: cms(ns, 'p'), contentType: STRATEGIC, body: { data: { w: '4' } } });
      await w.req('json patch add', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: [{ op: 'add', path: '/data/v', value: '5' }] });
      await w.req('json patch replace and remove', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: [{ op: 'replace', path: '/data/x', value: '11' }, { op: 'remove', path: '/data/w' }] });
      await w.req('json patch test that holds', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: [{ op: 'test', path: '/data/x', value: '11' }, { op: 'add', path: '/data/t', value: 'ok' }] });
      await w.req('json patch test that fails', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: [{ op: 'test', path: '/data/x', value: 'no' }] });
      await w.req('json patch remove of a missing member', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: [{ op: 'remove', path: '/data/nope' }] });
      await w.req('json patch that is not a list', { method: 'PATCH', path: cms(ns, 'p'), contentType: JSON_PATCH, body: { op: 'add' } });
      await w.req('merge patch with a stale resourceVersion', { method: 'PATCH', path: cms(ns, 'p'), contentType: MERGE, body: { metadata: { resourceVersion: '1' }, data: { x: 'stale' } } });
      await w.req('merge patch that changes the name', { method: 'PATCH', path: cms(ns, 'p'), contentType: MERGE, body: { metadata: { name: 'other' } } });
      await w.req('merge patch of a missing object', { method: 'PATCH', path: cms(ns, 'missing'), contentType: MERGE, body: { data: { x: '1' } } });
      await w.req('patch with an unsupported content type', { method: 'PATCH', path: cms(ns, 'p'), contentType: 'text/plain', body: 'x' });
      await w.req('merge patch that is not JSON', { method: 'PATCH', path: cms(ns, 'p'), contentType: MERGE, body: '{nope' });
      await w.req('dry-run merge patch', { method: 'PATCH', path: cms(ns, 'p'), query: { dryRun: 'All' }, contentType: MERGE, body: { data: { dry: 'yes' } } });
      await w.req('get', { path: cms(ns, 'p') });
    },
  },
  {
    // Issue 47, defect 2: the JSON toolkit's applier in kube-apiserver's dialect, key names Object.prototype has, list indexes.
    name: 'json patch in detail',
    run: async (w, ns) => {
      const patch = (label: string, body: unknown, contentType = JSON_PATCH) => w.req(label, { method: 'PATCH', path: cms(ns, 'j'), contentType, body });
      await w.req('create', { method: 'POST', path: cms(ns), body: cm(ns, 'j', { metadata: { finalizers: ['a.io/b', 'c.io/d'], labels: { a: '1', b: '2' } }, data: { constructor: 'c' } }) });
      await patch('keys named like Object.prototype members', [{ op: 'add', path: '/data/toString', value: 't' }, { op: 'add', path: '/data/__proto__', value: 'p' }, { op: 'remove', path: '/data/constructor' }]);
      await patch('remove of a member only Object.prototype has', [{ op: 'remove', path: '/data/hasOwnProperty' }]);
      await patch('add at a list index inserts, at - appends', [{ op: 'add', path: '/metadata/finalizers/0', value: 'x.io/first' }, { op: 'add', path: '/metadata/finalizers/-', value: 'x.io/last' }]);
      await patch('test of an object in another key order', [{ op: 'test', path: '/metadata/labels', value: { b: '2', a: '1' } }, { op: 'add', path: '/data/ordered', value: 'y' }]);
      await patch('test of a missing member against null', [{ op: 'test', path: '/data/none', value: null }, { op: 'add', path: '/data/n', value: 'y' }]);
      await patch('replace of a missing member', [{ op: 'replace', path: '/data/absent', value: 'r' }]);
      await patch('a path whose parent does not exist', [{ op: 'add', path: '/data/k', value: 'v' }, { op: 'add', path: '/spec/x/y', value: 1 }]);
      await patch('an index past the end', [{ op: 'add', path: '/metadata/finalizers/9', value: 'x.io/far' }]);
      await patch('remove at -', [{ op: 'remove', path: '/metadata/finalizers/-' }]);
      await patch('a negative index', [{ op: 'remove', path: '/metadata/finalizers/-1' }]);
      await patch('an index with a leading zero', [{ op: 'remove', path: '/metadata/finalizers/01' }]);
      await patch('an unknown op', [{ op: 'frobnicate', path: '/data' }]);
      await patch('a list of strings', ['add']);
      await patch('move into its own child', [{ op: 'move', from: '/metadata/labels', path: '/metadata/labels/x' }]);
      await patch('copy and move', [{ op: 'copy', from: '/data/toString', path: '/data/copied' }, { op: 'move', from: '/data/n', path: '/data/moved' }]);
      await patch('merge patch of a key named __proto__', JSON.parse('{"data":{"__proto__":"merged","m":"1"}}'), MERGE);
      // What a mutating webhook sends: the diff of the data it changed (remove, replace, add of prototype-named keys).
      const before = JSON.parse('{"data":{"toString":"t","__proto__":"merged"}}') as unknown;
      const after = JSON.parse('{"data":{"__proto__":"diffed","valueOf":"v","constructor":"c2"}}') as unknown;
      await patch('the webhook diff of keys named like Object.prototype members', jsonPatchDiff(before, after));
      await w.req('get', { path: cms(ns, 'j') });
    },
  },
  {
    name: 'server-side apply',
    run: async (w, ns) => {
      const apply = (label: string, manager: string | undefined, body: Record<string, unknown>, force?: boolean) =>
        w.req(label, { method: 'PATCH', path: cms(ns, 's'), contentType: APPLY, query: { fieldManager: manager, force }, body });
      await apply('apply without a fieldManager', undefined, cm(ns, 's', { data: { a: '1' } }));
      await apply('apply creates', 'one', cm(ns, 's', { data: { a: '1', b: '1' } }));
      await apply('apply again, same fields', 'one', cm(ns, 's', { data: { a: '1', b: '1' } }));
      await apply('apply of a field another manager owns', 'two', cm(ns, 's', { data: { a: '2' } }));
      await apply('apply of a new field', 'two', cm(ns, 's', { data: { c: '2' } }));
      await apply('apply with force', 'two', cm(ns, 's', { data: { a: '2', c: '2' } }), true);
      await apply('apply that drops a field', 'one', cm(ns, 's', { data: { b: '1' } }));
      await w.req('update by another manager', { method: 'PATCH', path: cms(ns, 's'), contentType: MERGE, query: { fieldManager: 'three' }, body: { data: { b: '3' } } });
      await apply('apply conflicting with an update', 'one', cm(ns, 's', { data: { b: '1' } }));
      await apply('apply with a wrong kind', 'one', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns } });
      await apply('apply with another name', 'one', cm(ns, 'other', { data: { b: '1' } }));
      await apply('apply of a body that is not YAML', 'one', '{]' as unknown as Record<string, unknown>);
      await w.req('get', { path: cms(ns, 's') });
    },
  },
  {
    name: 'finalizers',
    run: async (w, ns) => {
      await w.req('create with a finalizer', { method: 'POST', path: cms(ns), body: cm(ns, 'f', { metadata: { finalizers: ['example.com/hold'] } }) });
      await w.req('delete marks it', { method: 'DELETE', path: cms(ns, 'f') });
      await w.req('get while marked', { path: cms(ns, 'f') });
      await w.req('delete again while marked', { method: 'DELETE', path: cms(ns, 'f') });
      await w.req('a new finalizer on a marked object', { method: 'PATCH', path: cms(ns, 'f'), contentType: MERGE, body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } } });
      await w.req('a data change on a marked object', { method: 'PATCH', path: cms(ns, 'f'), contentType: MERGE, body: { data: { still: 'here' } } });
      await w.req('clearing deletionTimestamp', { method: 'PATCH', path: cms(ns, 'f'), contentType: MERGE, body: { metadata: { deletionTimestamp: null } } });
      await w.req('removing the last finalizer', { method: 'PATCH', path: cms(ns, 'f'), contentType: MERGE, body: { metadata: { finalizers: null } } });
      await w.req('get after the finalizer went', { path: cms(ns, 'f') });
      await w.req('create with two finalizers', { method: 'POST', path: cms(ns), body: cm(ns, 'g', { metadata: { finalizers: ['example.com/a', 'example.com/b'] } }) });
      await w.req('delete with two finalizers', { method: 'DELETE', path: cms(ns, 'g') });
      await w.req('removing one of two finalizers', { method: 'PATCH', path: cms(ns, 'g'), contentType: JSON_PATCH, body: [{ op: 'remove', path: '/metadata/finalizers/0' }] });
      await w.req('removing the rest by update', { method: 'PATCH', path: cms(ns, 'g'), contentType: MERGE, body: { metadata: { finalizers: [] } } });
      await w.req('get after the last went', { path: cms(ns, 'g') });
      await w.req('create j', { method: 'POST', path: cms(ns), body: cm(ns, 'j') });
      await w.req('delete with propagationPolicy Foreground', { method: 'DELETE', path: cms(ns, 'j'), body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' } });
      await w.req('create with an invalid finalizer', { method: 'POST', path: cms(ns), query: { dryRun: 'All' }, body: cm(ns, 'h', { metadata: { finalizers: ['no-slash'] } }) });
      await w.req('create with deletionTimestamp set', { method: 'POST', path: cms(ns), body: cm(ns, 'i', { metadata: { deletionTimestamp: '2020-01-01T00:00:00Z' } }) });
      await w.req('get of i', { path: cms(ns, 'i') });
      await w.req('delete with propagationPolicy Orphan', { method: 'DELETE', path: cms(ns, 'i'), body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' } });
      await w.req('get of i after', { path: cms(ns, 'i') });
    },
  },
  {
    name: 'label and field selectors',
    run: async (w, ns) => {
      const labels: Array<Record<string, string>> = [
        { app: 'a', tier: 'front' },
        { app: 'a', tier: 'back' },
        { app: 'b', tier: 'front' },
        { app: 'b' },
        { app: 'c', tier: 'back', canary: 'true' },
        {},
        { tier: 'front' },
        { app: 'a', canary: 'false' },
      ];
      for (const [i, l] of labels.entries()) {
        await w.req(`create sel-${i}`, { method: 'POST', path: cms(ns), body: cm(ns, `sel-${i}`, { metadata: { labels: l }, data: { index: String(i) } }) });
      }
      const selectors = ['app=a', 'app==a', 'app!=a', 'app in (a,b)', 'app notin (a,b)', 'app', '!app', 'app=a,tier=front', 'app,tier', 'canary=true', 'tier in (front),app!=b', '!tier', 'app in ()', 'app=', 'x/y=z', '', 'app in (a', 'Bad Key=1', 'app=a b'];
      for (const s of selectors) await w.req(`labelSelector ${JSON.stringify(s)}`, { path: cms(ns), query: { labelSelector: s } });
      const fields = ['metadata.name=sel-1', 'metadata.name==sel-1', 'metadata.name!=sel-1', `metadata.namespace=${ns}`, 'metadata.namespace=other', 'metadata.name=sel-1,metadata.name=sel-2', 'data.index=1', 'metadata.uid=x', 'spec.nope=1', 'metadata.name'];
      for (const f of fields) await w.req(`fieldSelector ${JSON.stringify(f)}`, { path: cms(ns), query: { fieldSelector: f } });
      await w.req('both selectors', { path: cms(ns), query: { labelSelector: 'app=a', fieldSelector: 'metadata.name!=sel-0' } });
      await w.req('get with a label selector', { path: cms(ns, 'sel-0'), query: { labelSelector: 'app=zzz' } });
      await w.req('selectors across namespaces', { path: '/api/v1/configmaps', query: { labelSelector: 'app=a', fieldSelector: `metadata.namespace=${ns}` } });
    },
  },
  {
    name: 'pagination',
    run: async (w, ns) => {
      for (let i = 0; i < 23; i++) await w.req(`create page-${i}`, { method: 'POST', path: cms(ns), body: cm(ns, `page-${String(i).padStart(2, '0')}`, { metadata: { labels: { odd: String(i % 2 === 1) } } }) });
      for (const limit of [5, 10, 23, 100]) {
        let token: string | undefined;
        let page = 0;
        do {
          const a = await w.req(`limit ${limit} page ${++page}`, { path: cms(ns), query: { limit, continue: token } });
          token = a.body?.metadata?.continue || undefined;
        } while (token !== undefined && page < 10);
      }
      for (const limit of [1, 3, 7]) {
        let token: string | undefined;
        let page = 0;
        do {
          const a = await w.req(`odd=true, limit ${limit} page ${++page}`, { path: cms(ns), query: { limit, continue: token, labelSelector: 'odd=true' } });
          token = a.body?.metadata?.continue || undefined;
        } while (token !== undefined && page < 15);
      }
      const first = await w.req('limit 4 with a selector', { path: cms(ns), query: { limit: 4, labelSelector: 'odd=true' } });
      const token = String(first.body?.metadata?.continue ?? '');
      await w.req('create while paging', { method: 'POST', path: cms(ns), body: cm(ns, 'page-99', { metadata: { labels: { odd: 'true' } } }) });
      await w.req('delete while paging', { method: 'DELETE', path: cms(ns, 'page-21') });
      await w.req('second page sees the first page\'s snapshot', { path: cms(ns), query: { limit: 4, labelSelector: 'odd=true', continue: token } });
      await w.req('a continue token that is garbage', { path: cms(ns), query: { limit: 4, continue: 'garbage' } });
      await w.req('a continue token with a resourceVersion', { path: cms(ns), query: { limit: 4, continue: token, resourceVersion: '1' } });
      await w.req('limit 0', { path: cms(ns), query: { limit: 0 } });
      await w.req('limit -1', { path: cms(ns), query: { limit: -1 } });
      const now = await w.req('list now', { path: cms(ns), query: { labelSelector: 'odd=false' } });
      const rv = String(now.body?.metadata?.resourceVersion);
      await w.req('resourceVersion=0 with a limit', { path: cms(ns), query: { resourceVersion: '0', limit: 3, labelSelector: 'odd=false' } });
      await w.req('resourceVersion=N NotOlderThan', { path: cms(ns), query: { resourceVersion: rv, resourceVersionMatch: 'NotOlderThan', labelSelector: 'odd=false' } });
      await w.req('resourceVersion=N Exact', { path: cms(ns), query: { resourceVersion: rv, resourceVersionMatch: 'Exact', labelSelector: 'odd=false' } });
      await w.req('resourceVersion=N with a limit', { path: cms(ns), query: { resourceVersion: rv, limit: 3, labelSelector: 'odd=false' } });
      await w.req('resourceVersionMatch without resourceVersion', { path: cms(ns), query: { resourceVersionMatch: 'Exact' } });
      await w.req('resourceVersionMatch unknown', { path: cms(ns), query: { resourceVersion: rv, resourceVersionMatch: 'Sometime' } });
      await w.req('resourceVersion not a number', { path: cms(ns), query: { resourceVersion: 'abc' } });
      await w.endpoint.compact();
      await w.req('a continue token from before a compaction', { path: cms(ns), query: { limit: 4, labelSelector: 'odd=true', continue: token } });
      await w.req('Exact at a compacted resourceVersion', { path: cms(ns), query: { resourceVersion: '2', resourceVersionMatch: 'Exact' } });
    },
  },
  {
    name: 'watch',
    run: async (w, ns) => {
      const created = await w.req('create', { method: 'POST', path: cms(ns), body: cm(ns, 'w', { metadata: { labels: { in: 'yes' } } }) });
      const from = String(created.body?.metadata?.resourceVersion);
      await w.req('update', { method: 'PATCH', path: cms(ns, 'w'), contentType: MERGE, body: { data: { a: '1' } } });
      await w.req('leave the selection', { method: 'PATCH', path: cms(ns, 'w'), contentType: MERGE, body: { metadata: { labels: { in: 'no' } } } });
      await w.req('enter it again', { method: 'PATCH', path: cms(ns, 'w'), contentType: MERGE, body: { metadata: { labels: { in: 'yes' } } } });
      await w.req('create another', { method: 'POST', path: cms(ns), body: cm(ns, 'w2') });
      await w.req('delete', { method: 'DELETE', path: cms(ns, 'w') });
      await w.watch('from the create', { path: cms(ns), query: { resourceVersion: from } }, 5);
      await w.watch('from the create, selected', { path: cms(ns), query: { resourceVersion: from, labelSelector: 'in=yes' } }, 3);
      await w.watch('from the create, one name', { path: cms(ns), query: { resourceVersion: from, fieldSelector: 'metadata.name=w2' } }, 1);
      await w.watch('from 0', { path: cms(ns), query: { resourceVersion: '0' } }, 1);
      await w.watch('from now, nothing happens', { path: cms(ns), query: { timeoutSeconds: 1 } }, 2, 4_000);
      await w.watch('initial events and a bookmark', { path: cms(ns), query: { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true', resourceVersion: '' } }, 2);
      await w.watch('sendInitialEvents without bookmarks', { path: cms(ns), query: { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' } }, 1, 2_000);
      await w.watch('from a resourceVersion that is not a number', { path: cms(ns), query: { resourceVersion: 'abc' } }, 1, 2_000);
      await w.watch('one object by name', { path: cms(ns), query: { resourceVersion: from, fieldSelector: 'metadata.name=w' } }, 4);
      await w.watch('from a resourceVersion older than the history', { path: cms(ns), query: { resourceVersion: '2' } }, 1, 3_000);
      await w.req('get at resourceVersion 0', { path: cms(ns, 'w2'), query: { resourceVersion: '0' } });
      await w.watch('with a bad label selector', { path: cms(ns), query: { labelSelector: 'a in (' } }, 1, 2_000);
    },
  },
  {
    name: 'generation of built-in kinds',
    run: async (w, ns) => {
      const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
      const spec = { replicas: 1, selector: { matchLabels: { app: 'g' } }, template: { metadata: { labels: { app: 'g' } }, spec: { containers: [{ name: 'c', image: 'example.com/c:1' }] } } };
      await w.req('Deployment create with a generation', { method: 'POST', path: deployments, body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation: 7 }, spec } });
      await w.req('Deployment spec change', { method: 'PATCH', path: `${deployments}/d`, contentType: MERGE, body: { spec: { replicas: 2 } } });
      await w.req('Deployment label change', { method: 'PATCH', path: `${deployments}/d`, contentType: MERGE, body: { metadata: { labels: { l: '1' } } } });
      await w.req('Deployment annotation change', { method: 'PATCH', path: `${deployments}/d`, contentType: MERGE, body: { metadata: { annotations: { a: '1' } } } });
      await w.req('Deployment status change', { method: 'PATCH', path: `${deployments}/d/status`, contentType: MERGE, body: { status: { observedGeneration: 3 } } });
      await w.req('Deployment delete', { method: 'DELETE', path: `${deployments}/d` });
      const created = await w.req('ConfigMap create with a generation', { method: 'POST', path: cms(ns), body: cm(ns, 'g', { metadata: { generation: 3 }, data: { a: '1' } }) });
      await w.req('ConfigMap update with another generation', { method: 'PUT', path: cms(ns, 'g'), body: { ...(created.body as object), metadata: { ...created.body?.metadata, generation: 9 }, data: { a: '2' } } });
    },
  },
  {
    name: 'other kinds',
    run: async (w, ns) => {
      const kinds: Array<{ path: string; body: (name: string) => Record<string, unknown>; change: Record<string, unknown> }> = [
        {
          path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
          body: (name) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } }),
          change: { spec: { holderIdentity: 'b' } },
        },
        {
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
          body: (name) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }),
          change: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] },
        },
        {
          path: `/api/v1/namespaces/${ns}/serviceaccounts`,
          body: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }),
          change: { metadata: { annotations: { a: '1' } } },
        },
        {
          path: `/api/v1/namespaces/${ns}/secrets`,
          body: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } }),
          change: { data: { k2: 'djI=' } },
        },
        {
          path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
          body: (name) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] }),
          change: { metadata: { labels: { a: '1' } } },
        },
      ];
      for (const k of kinds) {
        const kind = String(k.body('x').kind);
        const name = `${ns}-${kind.toLowerCase()}`;
        const created = await w.req(`${kind} create`, { method: 'POST', path: k.path, body: k.body(name) });
        await w.req(`${kind} get`, { path: `${k.path}/${name}` });
        await w.req(`${kind} list`, { path: k.path, query: { fieldSelector: `metadata.name=${name}` } });
        await w.req(`${kind} update`, { method: 'PUT', path: `${k.path}/${name}`, body: { ...(created.body as object), metadata: { ...created.body?.metadata, labels: { updated: 'yes' } } } });
        await w.req(`${kind} merge patch`, { method: 'PATCH', path: `${k.path}/${name}`, contentType: MERGE, body: k.change });
        await w.req(`${kind} delete`, { method: 'DELETE', path: `${k.path}/${name}` });
        await w.req(`${kind} get after delete`, { path: `${k.path}/${name}` });
      }
    },
  },
  {
    name: 'discovery and unknown paths',
    run: async (w, ns) => {
      await w.req('unknown group', { path: '/apis/nope.example.com/v1/things' });
      await w.req('unknown group, namespaced', { path: `/apis/nope.example.com/v1/namespaces/${ns}/things` });
      await w.req('unknown resource in core v1', { path: `/api/v1/namespaces/${ns}/widgets` });
      await w.req('unknown version of a known group', { path: '/apis/apps/v9/deployments' });
      await w.req('a cluster-scoped resource under a namespace', { path: `/api/v1/namespaces/${ns}/nodes` });
      await w.req('unknown subresource', { path: `${cms(ns)}/x/bogus` });
      await w.req('POST to an object path', { method: 'POST', path: cms(ns, 'x'), body: cm(ns, 'x') });
      await w.req('list in a missing namespace', { path: `/api/v1/namespaces/${ns}-gone/configmaps` });
    },
  },
];
