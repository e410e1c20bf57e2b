// newListWatch against the real kube-apiserver: list, watch, paging, streaming list, errors, abort.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { ApiStatusError, type KubeObject } from '../../src/core/index.js';
import { newListWatch, type KubeListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
const initialEventsEnd = 'k8s.io/initial-events-end';

/** Reads `events` until `until` accepts one (inclusive), then leaves the iteration, which closes the stream. */
async function collectUntil<T>(
  events: AsyncIterable<WatchEvent<T>>,
  until: (event: WatchEvent<T>) => boolean,
): Promise<WatchEvent<T>[]> {
  const seen: WatchEvent<T>[] = [];
  for await (const event of events) {
    seen.push(event);
    if (until(event)) return seen;
  }
  throw new Error(`the watch ended before the awaited event; saw ${JSON.stringify(seen)}`);
}

const nameOf = (event: WatchEvent<KubeObject>): string | undefined => event.object.metadata?.name;

describe('newListWatch against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;
  let lw: KubeListWatch<KubeObject>;
  const namespace = `ki-lw-${randomBytes(3).toString('hex')}`;
  const controller = new AbortController();

  beforeAll(async () => {
    server = await startRealApiServer();
    core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    lw = newListWatch<KubeObject>(server.kubeConfig, configmaps, { namespace });
  });
  afterAll(async () => {
    controller.abort();
    lw?.close();
    await server?.stop();
  });

  it('lists configmaps and, watching from the list resourceVersion, sees one created through CoreV1Api as ADDED', async () => {
    const list = await lw.list({}, controller.signal);
    expect(list.kind).toBe('ConfigMapList');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);

    const watchSignal = new AbortController();
    const events = await lw.watch({ resourceVersion: list.metadata.resourceVersion }, watchSignal.signal);
    const created = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'first' }, data: { a: '1' } },
    });
    const seen = await collectUntil(events, (e) => nameOf(e) === 'first');
    watchSignal.abort();
    expect(seen.at(-1)).toMatchObject({
      type: 'ADDED',
      object: { kind: 'ConfigMap', metadata: { name: 'first', resourceVersion: created.metadata?.resourceVersion } },
    });

    const again = await lw.list({}, controller.signal);
    expect(again.items.map((cm) => cm.metadata?.name)).toContain('first');
    expect(again.items.find((cm) => cm.metadata?.name === 'first')).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
  });

  it('pages a list with limit and continue until the continue token is empty, one snapshot across pages', async () => {
    for (const i of [1, 2, 3, 4, 5]) {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `page-${i}`, labels: { paged: 'yes' } } } });
    }
    const names: string[] = [];
    const versions = new Set<string | undefined>();
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await lw.list({ limit: 2, continue: token, labelSelector: 'paged=yes' }, controller.signal);
      expect(page.items.length).toBeLessThanOrEqual(2);
      names.push(...page.items.map((cm) => cm.metadata!.name!));
      versions.add(page.metadata.resourceVersion);
      token = page.metadata.continue || undefined;
      pages += 1;
    } while (token !== undefined);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual(['page-1', 'page-2', 'page-3', 'page-4', 'page-5']);
    expect(versions.size).toBe(1);
  });

  it('streams the current state as ADDED events ending in a bookmark annotated initial-events-end', async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'streamed', labels: { streamed: 'yes' } } } });
    const watchSignal = new AbortController();
    const events = await lw.watch(
      {
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        resourceVersionMatch: 'NotOlderThan',
        labelSelector: 'streamed=yes',
      },
      watchSignal.signal,
    );
    const seen = await collectUntil(events, (e) => e.type === 'BOOKMARK');
    watchSignal.abort();
    expect(seen.map((e) => [e.type, nameOf(e)])).toEqual([
      ['ADDED', 'streamed'],
      ['BOOKMARK', undefined],
    ]);
    const bookmark = seen[1]!.object;
    expect(bookmark.metadata?.annotations?.[initialEventsEnd]).toBe('true');
    expect(Number(bookmark.metadata?.resourceVersion)).toBeGreaterThanOrEqual(
      Number(seen[0]!.object.metadata?.resourceVersion),
    );
  });

  it('rejects a list of a resource the server does not serve with ApiStatusError 404', async () => {
    const missing = newListWatch(server.kubeConfig, { group: 'example.com', version: 'v1', resource: 'nothings' });
    const failure = await missing.list({}, controller.signal).catch((err: unknown) => err);
    missing.close();
    expect(failure).toBeInstanceOf(ApiStatusError);
    expect(failure).toMatchObject({ statusCode: 404 });
  });

  it('ends the watch iteration without an error when its signal aborts', async () => {
    const watchSignal = new AbortController();
    const events = await lw.watch({ resourceVersion: '0' }, watchSignal.signal);
    const drained = (async () => {
      const seen: WatchEvent<KubeObject>[] = [];
      for await (const event of events) {
        seen.push(event);
        if (nameOf(event) === 'abort-marker') watchSignal.abort();
      }
      return seen;
    })();
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'abort-marker' } } });
    const seen = await drained;
    expect(seen.map(nameOf)).toContain('abort-marker');
    expect(watchSignal.signal.aborted).toBe(true);
  });
});
