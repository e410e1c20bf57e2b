// The compaction scenario on the real thing: etcd history compacted under a resourceVersion answers 410.
//
// The apiserver runs with --watch-cache=false here, so watches and exact lists go to etcd and see its
// compaction directly; with the watch cache on, the cache's own window decides when an old
// resourceVersion expires (see docs/real-apiserver.md).

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { isExpiredError } from '../../src/core/errors.js';
import {
  SharedIndexInformer,
  newListWatch,
  type KubeListWatch,
  type KubeObject,
  type ListOptions,
  type ListerWatcher,
  type ObjectList,
  type WatchEvent,
} from '../../src/index.js';
import {
  EventRecorder,
  compactEtcd,
  etcdRevision,
  startRealApiServer,
  watchUntil,
  type RealApiServer,
} from './harness.js';

/**
 * Passes through to a real ListerWatcher, except that the test can end the open watch (as a dropped
 * connection would) and hold the next one until it has changed and compacted the history.
 */
class GatedListerWatcher<T> implements ListerWatcher<T> {
  /** Every list call's options. */
  readonly lists = new EventRecorder<ListOptions>();
  /** Every watch call's options, recorded before the gate. */
  readonly watches = new EventRecorder<ListOptions>();
  readonly #inner: ListerWatcher<T>;
  #gate: Promise<void> = Promise.resolve();
  #current: AbortController | undefined;

  constructor(inner: ListerWatcher<T>) {
    this.#inner = inner;
  }

  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    this.lists.record(options);
    return this.#inner.list(options, signal);
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.watches.record(options);
    await this.#gate;
    const current = new AbortController();
    if (signal.aborted) current.abort();
    signal.addEventListener('abort', () => current.abort(), { once: true });
    this.#current = current;
    return this.#inner.watch(options, current.signal);
  }

  /** Ends the open watch and holds the next watch call until the returned function is called. */
  breakAndHold(): () => void {
    let open!: () => void;
    this.#gate = new Promise<void>((resolve) => (open = resolve));
    this.#current?.abort();
    return open;
  }
}

type ConfigMap = KubeObject & { data?: Record<string, string> };

describe('etcd compaction under the real apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;
  let lw: KubeListWatch<KubeObject>;
  const signal = new AbortController().signal;
  const namespace = `ki-compact-${randomBytes(3).toString('hex')}`;
  const path = `/api/v1/namespaces/${namespace}/configmaps`;

  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--watch-cache=false'] });
    core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    lw = newListWatch<KubeObject>(server.kubeConfig, { group: '', version: 'v1', resource: 'configmaps' }, { namespace });
  });
  afterAll(async () => {
    lw?.close();
    await server?.stop();
  });

  /** Creates a configmap and updates it once; resolves with both resourceVersions. */
  async function createAndUpdate(name: string): Promise<{ created: string; updated: string }> {
    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: '1' } } });
    const updated = await core.replaceNamespacedConfigMap({
      name,
      namespace,
      body: { ...created, data: { v: '2' } },
    });
    return { created: created.metadata!.resourceVersion!, updated: updated.metadata!.resourceVersion! };
  }

  it('reads the same revision from etcd that the apiserver hands out as resourceVersion', async () => {
    const { updated } = await createAndUpdate('revision');
    expect(await etcdRevision(server.etcdEndpoint)).toBeGreaterThanOrEqual(Number(updated));
  });

  it('answers a watch from a compacted resourceVersion with an ERROR event carrying 410 Gone', async () => {
    const rv = await createAndUpdate('watched');
    const before = await watchUntil(server.kubeConfig, path, { resourceVersion: rv.created }, (e) => e.type !== 'ADDED');
    expect(before.at(-1)).toMatchObject({ type: 'MODIFIED', object: { metadata: { resourceVersion: rv.updated } } });

    // One more write, so the compaction covers the MODIFIED event too. (Compacting exactly at the
    // update's revision would let etcd replay it without its previous value, which the apiserver
    // answers with a 500 rather than a 410 — see docs/real-apiserver.md.)
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'watched-later' } } });
    const compactedTo = await compactEtcd(server.etcdEndpoint);
    expect(compactedTo).toBeGreaterThan(Number(rv.updated));

    const after = await watchUntil(server.kubeConfig, path, { resourceVersion: rv.created }, () => true);
    expect(after).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410 }) }]);
  });

  it('answers an exact list at a compacted resourceVersion with HTTP 410', async () => {
    const rv = await createAndUpdate('listed');
    const exact = { namespace, resourceVersion: rv.created, resourceVersionMatch: 'Exact' };
    const before = await core.listNamespacedConfigMap(exact);
    expect(before.metadata?.resourceVersion).toBe(rv.created);

    await compactEtcd(server.etcdEndpoint);
    const failure = await core.listNamespacedConfigMap(exact).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ApiException);
    expect((failure as ApiException<unknown>).code).toBe(410);
  });

  it('hands a newListWatch watch from a compacted resourceVersion an ERROR event with Status 410', async () => {
    const rv = await createAndUpdate('lw-watched');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'lw-watched-later' } } });
    await compactEtcd(server.etcdEndpoint);

    const watchSignal = new AbortController();
    const first = await (await lw.watch({ resourceVersion: rv.created }, watchSignal.signal))[Symbol.asyncIterator]().next();
    watchSignal.abort();
    expect(first.done).toBe(false);
    expect(first.value).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410 } });
    expect(isExpiredError(first.value?.object)).toBe(true);
  });

  it('rejects a newListWatch list whose continue token predates the compaction as expired', async () => {
    for (const name of ['lw-page-1', 'lw-page-2', 'lw-page-3']) {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels: { page: 'yes' } } } });
    }
    const first = await lw.list({ limit: 1, labelSelector: 'page=yes' }, signal);
    expect(first.metadata.continue).toBeTruthy();
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'lw-page-later' } } });
    await compactEtcd(server.etcdEndpoint);

    const failure = await lw.list({ limit: 1, labelSelector: 'page=yes', continue: first.metadata.continue }, signal).catch((err: unknown) => err);
    expect(isExpiredError(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'EXPIRED', statusCode: 410 });
  });

  it('makes an informer whose watch resumes from a compacted resourceVersion relist and catch up', async () => {
    const ns = `${namespace}-inf`;
    await core.createNamespace({ body: { metadata: { name: ns } } });
    for (const name of ['kept', 'removed']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v: '1' } } });
    }
    const gated = new GatedListerWatcher<ConfigMap>(
      newListWatch<ConfigMap>(server.kubeConfig, { group: '', version: 'v1', resource: 'configmaps' }, { namespace: ns }),
    );
    const watchErrors: Error[] = [];
    const informer = new SharedIndexInformer<ConfigMap>(gated, { name: 'compaction', onWatchError: (err) => watchErrors.push(err) });
    const seen = new EventRecorder<string>();
    informer.addEventHandler({
      onAdd: (cm) => seen.record(`add ${cm.metadata!.name} v${cm.data?.v}`),
      onUpdate: (_old, cm) => seen.record(`update ${cm.metadata!.name} v${cm.data?.v}`),
      onDelete: (cm) => seen.record(`delete ${'key' in cm ? cm.key : cm.metadata!.name}`),
    });
    const controller = new AbortController();
    const running = informer.run(controller.signal);
    try {
      await informer.whenSynced(controller.signal);
      await seen.until((events) => events.length === 2);
      // One event on the first watch, so ending it is a normal close and not a "very short watch"
      // (which relists by itself, like client-go's reflector).
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'warmup' }, data: { v: '1' } } });
      await seen.until((events) => events.length === 3);
      expect(gated.watches.events).toHaveLength(1);
      const open = gated.breakAndHold();
      await gated.watches.until((calls) => calls.length === 2);
      const resumeFrom = Number(gated.watches.events[1]!.resourceVersion);

      const kept = await core.readNamespacedConfigMap({ name: 'kept', namespace: ns });
      await core.replaceNamespacedConfigMap({ name: 'kept', namespace: ns, body: { ...kept, data: { v: '2' } } });
      await core.deleteNamespacedConfigMap({ name: 'removed', namespace: ns });
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'new' }, data: { v: '1' } } });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'inf-later' } } });
      expect(await compactEtcd(server.etcdEndpoint)).toBeGreaterThan(resumeFrom + 1);
      open();

      expect(gated.lists.events).toHaveLength(1);
      await seen.until((events) => events.length === 7);
      // The relist's view: what changed, what went away, and the unchanged object again as an update.
      expect(seen.events.slice(3).sort()).toEqual(['add new v1', `delete ${ns}/removed`, 'update kept v2', 'update warmup v1']);
      expect(gated.lists.events).toHaveLength(2);
      expect(watchErrors.some((err) => isExpiredError(err))).toBe(true);
      expect(informer.getStore().listKeys().sort()).toEqual([`${ns}/kept`, `${ns}/new`, `${ns}/warmup`]);
    } finally {
      controller.abort();
      await running;
    }
  });
});
