// The bad-input catalogue, list side: a list without a resource version, resource versions that are not integers, a selector that does not parse.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { newListWatch, type KubeListWatch, type ListerWatcher, type ListOptions, type ObjectList, type WatchEvent } from '../../src/listwatch/index.js';
import { pod, PODS, startInformer, stopAll, type Pod } from './harness.js';

afterEach(stopAll);

/** Drops `metadata.resourceVersion` from every list answer. */
function listsWithoutResourceVersion(inner: KubeListWatch<Pod>): ListerWatcher<Pod> {
  return {
    async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<Pod>> {
      const list = await inner.list(options, signal);
      return { ...list, metadata: { ...list.metadata, resourceVersion: undefined } };
    },
    watch: (options, signal) => inner.watch(options, signal),
  };
}

/** Serves resource versions as opaque strings (`"v-12"`), as some aggregated APIs do. */
function opaqueResourceVersions(inner: KubeListWatch<Pod>): ListerWatcher<Pod> {
  const out = (rv: string | undefined): string | undefined => (rv === undefined || rv === '' ? rv : `v-${rv}`);
  const back = (rv: string | undefined): string | undefined => (rv?.startsWith('v-') ? rv.slice(2) : rv);
  const mapObj = (obj: Pod): Pod => (obj?.metadata ? { ...obj, metadata: { ...obj.metadata, resourceVersion: out(obj.metadata.resourceVersion) } } : obj);
  return {
    async list(options, signal) {
      const list = await inner.list({ ...options, resourceVersion: back(options.resourceVersion) }, signal);
      return { ...list, metadata: { ...list.metadata, resourceVersion: out(list.metadata.resourceVersion) }, items: list.items.map(mapObj) };
    },
    async watch(options, signal) {
      const events = await inner.watch({ ...options, resourceVersion: back(options.resourceVersion) }, signal);
      return (async function* (): AsyncGenerator<WatchEvent<Pod>> {
        for await (const e of events) yield { ...e, object: mapObj(e.object) };
      })();
    },
  };
}

describe('bad list input', () => {
  it('reports a list item without a name as INVALID_OBJECT, keeps the cache as it was, and recovers once the list is clean', async () => {
    let armed = false;
    const h = await startInformer({
      wrap: (inner) => ({
        async list(options, signal) {
          const list = await inner.list(options, signal);
          return armed ? { ...list, items: [...list.items, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default' } }] } : list;
        },
        watch: (options, signal) => inner.watch(options, signal),
      }),
    });
    const before = h.cache();
    armed = true;
    h.server.compact();
    h.server.create(PODS, pod('after-compaction'), { broadcast: false });
    h.server.endWatches();
    await h.until(() => h.codes().includes(ErrorCodes.INVALID_OBJECT), 'the nameless item to be reported');
    expect(h.cache()).toEqual(before);
    expect(h.informer.isStopped()).toBe(false);
    armed = false;
    await h.stillRunning();
  });

  it('handles a list without a resource version: the cache fills, the informer keeps running', async () => {
    const h = await startInformer({ wrap: listsWithoutResourceVersion });
    await h.converged('the list without a resource version');
    await h.stillRunning();
  });

  // A list answer without metadata.resourceVersion is reported as a warning (INVALID_RESOURCE_VERSION):
  // the next watch starts from "" and the server re-sends every object, which still converges.
  it('reports a list without a resource version through the error hook', async () => {
    const h = await startInformer({ wrap: listsWithoutResourceVersion });
    await h.converged('the list without a resource version');
    expect(h.watchErrors.length).toBeGreaterThan(0);
    expect(h.watchErrors[0].error.message).toMatch(/resource ?version/i);
  });

  it('turns the resource-version guard off with exactly one INVALID_RESOURCE_VERSION warning for opaque resource versions', async () => {
    const h = await startInformer({ wrap: opaqueResourceVersions });
    await h.until(() => h.cache()['default/pod-0'] !== undefined, 'the first list');
    const created = h.server.create(PODS, pod('after-opaque'));
    await h.until(() => h.cache()['default/after-opaque'] === `v-${created.metadata?.resourceVersion}`, 'the watch event');
    h.server.update(PODS, pod('after-opaque', { spec: { changed: true } }));
    h.server.delete(PODS, 'pod-0');
    await h.until(() => h.cache()['default/pod-0'] === undefined, 'the delete');
    const warnings = h.watchErrors.filter((r) => (r.error as { code?: string }).code === ErrorCodes.INVALID_RESOURCE_VERSION);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].error.message).toMatch(/v-\d+.*not a decimal integer.*guard is off/);
    expect(h.watchErrors).toHaveLength(1);
    expect(Object.keys(h.cache()).sort()).toEqual(Object.keys(h.truth()).sort());
    expect(h.informer.isStopped()).toBe(false);
  });

  it('rejects a label selector that does not parse where it is given, before any request (it used to be answered 400 forever)', () => {
    expect(() => newListWatch<Pod>({} as never, PODS, { labelSelector: 'app in (web' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_SELECTOR, message: expect.stringMatching(/invalid label selector "app in \(web" at position \d+: .*newListWatch option labelSelector/) }),
    );
  });

  it('reports a selector the server rejects as an API_STATUS 400 naming it, keeps retrying, and makes whenSynced reject with it', async () => {
    // A selector that parses here but not on the server (the server is the judge of its own grammar).
    const sendBadSelector = (inner: KubeListWatch<Pod>): ListerWatcher<Pod> => ({
      list: (options, signal) => inner.list({ ...options, labelSelector: 'app in (web' }, signal),
      watch: (options, signal) => inner.watch({ ...options, labelSelector: 'app in (web' }, signal),
    });
    const h = await startInformer({ wrap: sendBadSelector, noSync: true });
    const synced = h.informer.whenSynced().catch((e: unknown) => e);
    await h.until(() => h.watchErrors.length >= 3, 'the failed lists');
    const err = h.watchErrors[0].error as Error & { code?: string; statusCode?: number };
    expect(err.code).toBe(ErrorCodes.API_STATUS);
    expect(err.statusCode).toBe(400);
    expect(err.message).toContain('app in (web');
    expect(h.watchErrors[0].context?.action).toBe('relist');
    expect(await synced).toMatchObject({ code: ErrorCodes.API_STATUS, statusCode: 400, message: expect.stringMatching(/cannot sync: 3 list\/watch requests in a row failed with HTTP 400/) });
    expect(h.informer.isStopped()).toBe(false);
    expect(h.informer.hasSynced()).toBe(false);
  });

  it('throws INVALID_SELECTOR from the lister for a selector that does not parse, leaving the cache as it was', async () => {
    const h = await startInformer();
    const before = h.cache();
    expect(() => h.informer.lister().list('app in (web')).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_SELECTOR }));
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });
});
