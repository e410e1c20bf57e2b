// NamespaceSetInformer on the fake API server: one list and watch per namespace, namespaces added and
// removed while running (one list for an added one, none for the others), removed ones leaving as deletes,
// a forbidden namespace set aside loudly while the others sync.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/core/index.js';
import { NamespaceSetInformer, SharedIndexInformer } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { metaNamespaceIndexFunc, NamespaceIndex } from '../../src/store/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from '../listwatch/helpers.js';
import { settle } from '../sharding/helpers.js';
import { until } from '../examples/helpers.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const { cleanups } = useCleanups();

function cm(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } };
}

interface Seen {
  events: string[];
}

async function setUp(namespaces: string[], extra: { fake?: FakeApiServer; namespaceExists?: (ns: string) => Promise<boolean | undefined> } = {}) {
  const fake = extra.fake ?? (await startFakeApiServer());
  if (extra.fake === undefined) cleanups.push(() => fake.close());
  const clock = new FakeClock();
  const warnings: string[] = [];
  const logger = { debug: () => {}, info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
  const informer = new NamespaceSetInformer<KubeObject>({
    name: 'cms',
    namespaces,
    resource: CONFIGMAPS,
    logger,
    namespaceExists: extra.namespaceExists,
    informerFor: (namespace) =>
      new SharedIndexInformer(newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { namespace, logger: false }), {
        name: `cms/${namespace}`,
        logger: false,
        clock,
        indexers: { [NamespaceIndex]: metaNamespaceIndexFunc },
      }),
  });
  const seen: Seen = { events: [] };
  const registration = informer.addEventHandler({
    onAdd: (o) => void seen.events.push(`add ${o.metadata?.namespace}/${o.metadata?.name}`),
    onUpdate: (_, o) => void seen.events.push(`update ${o.metadata?.namespace}/${o.metadata?.name}`),
    onDelete: (o) => {
      const obj = o as KubeObject;
      seen.events.push(`delete ${obj.metadata?.namespace}/${obj.metadata?.name}`);
    },
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await clock.advance(10_000);
    await running;
  });
  // A list, or a streaming list (a watch with sendInitialEvents, where the server serves them).
  const isList = (r: { verb?: string; query: Record<string, string> }): boolean => r.verb === 'list' || (r.verb === 'watch' && r.query.sendInitialEvents === 'true');
  const lists = (namespace?: string): number => fake.requests().filter((r) => isList(r) && r.resource === 'configmaps' && (namespace === undefined || r.namespace === namespace)).length;
  return { fake, clock, informer, seen, registration, lists, warnings, running };
}

const keys = (i: NamespaceSetInformer<KubeObject>): string[] => i.getIndexer().listKeys().sort();

describe('NamespaceSetInformer', () => {
  it('refuses an empty set, a name that is not a namespace, a namespace twice; and a duplicate add or an unknown remove', () => {
    const informerFor = (): SharedIndexInformer<KubeObject> => {
      throw new Error('not called');
    };
    expect(() => new NamespaceSetInformer({ namespaces: [], informerFor })).toThrow(/INVALID_OPTION|non-empty array/);
    expect(() => new NamespaceSetInformer({ namespaces: [], informerFor })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new NamespaceSetInformer({ namespaces: ['a', 'a'], informerFor })).toThrow(/lists a twice/);
    expect(() => new NamespaceSetInformer({ namespaces: [''], informerFor })).toThrow(/"" is not a namespace name/);
    expect(() => new NamespaceSetInformer({ namespaces: ['Bad_Name'], informerFor })).toThrow(/"Bad_Name" is not a namespace name/);
    expect(() => new NamespaceSetInformer({ namespaces: ['a'], informerFor, namespace: 'a' } as never)).toThrow(/unknown option namespace/);
    const informer = new NamespaceSetInformer({ namespaces: ['a', 'b'], informerFor, resource: CONFIGMAPS });
    expect(() => informer.addNamespace('a')).toThrow(/addNamespace\(a\): the namespace is in the set already \(a, b\)/);
    expect(() => informer.removeNamespace('c')).toThrow(/removeNamespace\("c"\): the namespace is not in the set \(a, b\)/);
    informer.addNamespace('c'); // before run: taken into the set, started by run
    informer.removeNamespace('a');
    expect(informer.namespaces()).toEqual(['b', 'c']);
    expect(informer.permissions().map((p) => `${p.namespace}:${p.verbs.join(',')}`)).toEqual(['b:list,watch', 'c:list,watch']);
  });

  it('caches each namespace with one list; an added namespace costs one list and the others none; a removed one leaves as deletes', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (const ns of ['a', 'b', 'c', 'd']) for (let i = 0; i < 3; i++) fake.create(CONFIGMAPS, cm(ns, `cm-${i}`));
    const { informer, seen, registration, lists, clock } = await setUp(['a', 'b'], { fake });
    await settle(clock, 'a and b synced', () => informer.hasSynced() && registration.hasSynced());
    expect(keys(informer)).toEqual(['a/cm-0', 'a/cm-1', 'a/cm-2', 'b/cm-0', 'b/cm-1', 'b/cm-2']);
    expect(lists('a')).toBe(1);
    expect(lists('b')).toBe(1);
    expect(lists('c')).toBe(0);
    expect(informer.getIndexer().byIndex(NamespaceIndex, 'b').map((o) => o.metadata?.name).sort()).toEqual(['cm-0', 'cm-1', 'cm-2']);
    expect(informer.getIndexer().byIndex(NamespaceIndex, 'c')).toEqual([]);

    informer.addNamespace('d');
    expect(informer.hasSynced()).toBe(false); // d is listed now
    await informer.whenNamespaceSynced('d');
    await settle(clock, 'd delivered', () => registration.hasSynced());
    expect(lists('d')).toBe(1); // one list for the namespace added
    expect(lists('a') + lists('b')).toBe(2); // none for the others
    expect(seen.events.filter((e) => e.startsWith('add d/')).sort()).toEqual(['add d/cm-0', 'add d/cm-1', 'add d/cm-2']);
    expect(informer.get('d/cm-1')?.metadata?.name).toBe('cm-1');

    seen.events.length = 0;
    informer.removeNamespace('a');
    expect(informer.get('a/cm-0')).toBeUndefined(); // out of the view at once
    expect(informer.namespaces()).toEqual(['b', 'd']);
    await settle(clock, 'the deletes of a delivered', () => seen.events.length === 3);
    expect(seen.events.sort()).toEqual(['delete a/cm-0', 'delete a/cm-1', 'delete a/cm-2']);
    expect(lists()).toBe(3); // still: a, b, d — no relist
    expect(informer.hasSynced()).toBe(true);

    fake.create(CONFIGMAPS, cm('b', 'late'));
    fake.create(CONFIGMAPS, cm('a', 'unseen'));
    await settle(clock, 'b/late delivered', () => seen.events.includes('add b/late'));
    expect(seen.events).not.toContain('add a/unseen');
  });

  it('delivers a removed namespace\'s deletes after what each handler had queued, in order', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    fake.create(CONFIGMAPS, cm('a', 'one'));
    const { informer, clock, registration } = await setUp(['a'], { fake });
    void registration;
    // A second handler that holds its first update: what comes after waits in its buffer.
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    informer.addEventHandler({
      onUpdate: async (_, o) => {
        order.push(`update ${o.metadata?.name} ${String((o as KubeObject & { data?: Record<string, string> }).data?.v)}`);
        if (order.length === 1) await held;
      },
      onDelete: (o) => void order.push(`delete ${(o as KubeObject).metadata?.name}`),
    });
    await settle(clock, 'a synced', () => informer.hasSynced());
    const base = fake.get(CONFIGMAPS, 'one', 'a') as KubeObject;
    fake.update(CONFIGMAPS, { ...base, data: { v: '1' } } as KubeObject);
    await settle(clock, 'the first update is being handled', () => order.length === 1);
    const now = fake.get(CONFIGMAPS, 'one', 'a') as KubeObject;
    fake.update(CONFIGMAPS, { ...now, data: { v: '2' } } as KubeObject);
    await settle(clock, 'the second update is cached', () => (informer.get('a/one') as { data?: { v?: string } } | undefined)?.data?.v === '2');
    informer.removeNamespace('a');
    release();
    await settle(clock, 'the delete delivered', () => order.length === 3);
    expect(order).toEqual(['update one 1', 'update one 2', 'delete one']);
  });

  it('sets a forbidden namespace aside loudly while the others sync, and takes it back once it may read', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    fake.create(CONFIGMAPS, cm('open', 'x'));
    fake.create(CONFIGMAPS, cm('closed', 'y'));
    // Both requests a list can be are refused: the streaming list's watch (the default) and the paged list it falls back to.
    for (let i = 0; i < 6; i++) {
      for (const verb of ['watch', 'list'] as const) fake.injectFault({ verb, resource: 'configmaps', namespace: 'closed', type: 'status', code: 403, message: `configmaps is forbidden: User "sa" cannot ${verb} resource "configmaps" in the namespace "closed"` });
    }
    const { informer, clock, registration, warnings } = await setUp(['closed', 'open'], { fake });
    await settle(clock, 'synced without closed', () => informer.hasSynced() && registration.hasSynced() && informer.failedNamespaces().length === 1);
    expect(informer.failedNamespaces()).toEqual(['closed']);
    expect(keys(informer)).toEqual(['open/x']);
    expect(warnings.some((w) => w.includes('namespace closed cannot sync') && w.includes('forbidden'))).toBe(true);
    const health = informer.health();
    expect(health.closed.ready).toBe(false);
    expect(health.closed.problems[0]).toMatch(/namespace closed cannot sync and is set aside: .*forbidden/);
    expect(health.open.ready).toBe(true);
    await expect(informer.whenNamespaceSynced('closed')).rejects.toMatchObject({ code: 'API_STATUS', statusCode: 403 });
    await informer.whenSynced();
    // The faults are used up: the next retry lists it, and it joins.
    for (let i = 0; i < 20 && informer.get('closed/y') === undefined; i++) {
      await clock.advance(30_000); // past the reflector's backoff after six failures
      await until(() => true, 'a turn');
    }
    await settle(clock, 'closed synced', () => informer.failedNamespaces().length === 0 && informer.get('closed/y') !== undefined);
    await informer.whenNamespaceSynced('closed');
    await until(() => registration.hasSynced(), 'the handler has closed/y');
  });

  it('warns of a namespace that does not exist (listed as an empty list) when namespaceExists says so', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    fake.create(CONFIGMAPS, cm('real', 'x'));
    const asked: string[] = [];
    const namespaceExists = async (ns: string): Promise<boolean> => {
      asked.push(ns);
      return ns !== 'ghost';
    };
    const { informer, clock, warnings } = await setUp(['real', 'ghost', 'empty'], { fake, namespaceExists });
    await settle(clock, 'the warning', () => informer.hasSynced() && warnings.length > 0);
    await until(() => asked.length === 2, 'both empty namespaces checked');
    expect(asked.sort()).toEqual(['empty', 'ghost']); // a namespace with objects exists: not asked
    expect(warnings).toEqual([expect.stringMatching(/namespace ghost does not exist/)]);
  });

  it('removing the last namespace leaves an empty, synced informer that takes namespaces again', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    fake.create(CONFIGMAPS, cm('a', 'one'));
    const { informer, clock, seen, lists } = await setUp(['a'], { fake });
    await settle(clock, 'a synced', () => informer.hasSynced());
    informer.removeNamespace('a');
    expect(informer.namespaces()).toEqual([]);
    expect(informer.hasSynced()).toBe(true);
    await settle(clock, 'the delete delivered', () => seen.events.includes('delete a/one'));
    informer.addNamespace('a');
    await informer.whenNamespaceSynced('a');
    expect(lists('a')).toBe(2); // a namespace added again is listed again
    await expect(informer.whenNamespaceSynced('zz')).rejects.toThrow(/not in the set/);
  });
});
