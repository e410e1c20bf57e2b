// finalizer() and ResourceClient against the fake API server: the protocol, failed cleanups, and races on the finalizer list.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import type { ResourceDescriptor } from '../../src/core/resources.js';
import { flushPromises } from '../../src/core/clock.js';
import { Action, Controller, finalizer, predicates, type FinalizerHandlers } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { newResourceClient, type ResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

interface Widget extends KubeObject {
  spec?: { size?: number };
}
const widgets: ResourceDescriptor<Widget> = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const NAME = 'example.com/cleanup';

let server: FakeApiServer;
let client: ResourceClient<Widget>;
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [widgets] });
  client = newResourceClient(server.kubeConfig, widgets, { fieldManager: 'test' });
});
afterEach(async () => {
  client.close();
  await server.close();
});

const stored = (): Widget | undefined => server.get<Widget>(widgets, 'w', 'ns');
const signal = new AbortController().signal;

function handlers(cleanupFails = 0) {
  const calls: string[] = [];
  const h: FinalizerHandlers<Widget> = {
    apply: async () => {
      calls.push('apply');
      return Action.requeueAfter(60_000);
    },
    cleanup: async () => {
      calls.push('cleanup');
      if (cleanupFails-- > 0) throw new Error('the cloud is down');
      return Action.done();
    },
  };
  return { calls, h };
}

describe('ResourceClient', () => {
  it('creates, gets, replaces (compare-and-swap), writes status, patches and deletes; non-2xx answers are ApiStatusErrors', async () => {
    const created = await client.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: { size: 1 } });
    expect(created.metadata?.resourceVersion).toBe(server.resourceVersion());
    expect(await client.get('w', 'ns')).toMatchObject({ spec: { size: 1 } });
    const replaced = await client.replace({ ...created, spec: { size: 2 } });
    await expect(client.replace({ ...created, spec: { size: 3 } })).rejects.toMatchObject({ code: 'API_STATUS', statusCode: 409 });
    await client.replaceStatus({ ...replaced, status: { ready: true } } as Widget);
    expect(await client.patch('w', 'ns', { spec: { size: 5 } }, 'merge')).toMatchObject({ spec: { size: 5 }, status: { ready: true } });
    await client.delete('w', 'ns');
    await expect(client.get('w', 'ns')).rejects.toMatchObject({ statusCode: 404, reason: 'NotFound' });
    // A mistake found before sending is a rejection of the call, like every other failure of it.
    await expect(client.get('w')).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(server.requests().filter((r) => r.method !== 'GET').every((r) => r.query.fieldManager === 'test' || r.method === 'DELETE')).toBe(true);
  });
});

describe('finalizer', () => {
  beforeEach(() => {
    server.create(widgets, { metadata: { name: 'w', namespace: 'ns' }, spec: { size: 1 } });
  });

  it("hands each patch's answer to ctx.wrote: the add's, and the removal's (deletionTimestamp, no finalizers left)", async () => {
    const { h } = handlers();
    const answers: Array<{ metadata?: { finalizers?: string[]; deletionTimestamp?: string; resourceVersion?: string } }> = [];
    const wrote = (r: unknown): void => void answers.push(r as (typeof answers)[number]);
    await finalizer(client, NAME, { object: stored(), signal, wrote }, h);
    expect(answers.map((a) => a.metadata?.finalizers)).toEqual([[NAME]]);
    await finalizer(client, NAME, { object: stored(), signal, wrote }, h); // apply: no patch
    expect(answers).toHaveLength(1);
    const marked = server.delete<Widget & KubeObject>(widgets, 'w', 'ns');
    await finalizer(client, NAME, { object: stored(), signal, wrote }, h);
    expect(answers[1]?.metadata).toMatchObject({ deletionTimestamp: expect.any(String) as string, resourceVersion: marked.metadata?.resourceVersion });
    expect(answers[1]?.metadata?.finalizers).toBeUndefined(); // no finalizers left: the empty list is omitted, as kube-apiserver omits it
    expect(stored()).toBeUndefined();
  });

  it('adds the finalizer to a live object and awaits the change; then applies; not found is done', async () => {
    const { calls, h } = handlers();
    expect(await finalizer(client, NAME, { object: stored(), signal }, h)).toEqual({ kind: 'await' });
    expect(stored()?.metadata?.finalizers).toEqual([NAME]);
    expect(await finalizer(client, NAME, { object: stored(), signal }, h)).toEqual({ kind: 'requeueAfter', ms: 60_000 });
    expect(calls).toEqual(['apply']);
    expect(await finalizer(client, NAME, { object: undefined, signal }, h)).toEqual({ kind: 'done' });
  });

  it('on deletion runs the cleanup, and only then removes the finalizer, which deletes the object', async () => {
    const { calls, h } = handlers();
    await finalizer(client, NAME, { object: stored(), signal }, h);
    await client.delete('w', 'ns');
    expect(stored()?.metadata?.deletionTimestamp).toBeDefined();
    expect(await finalizer(client, NAME, { object: stored(), signal }, h)).toEqual({ kind: 'done' });
    expect(calls).toEqual(['cleanup']);
    expect(stored()).toBeUndefined();
  });

  it('a failed cleanup keeps the finalizer (the object stays) and the retry finishes it', async () => {
    const { calls, h } = handlers(1);
    await finalizer(client, NAME, { object: stored(), signal }, h);
    await client.delete('w', 'ns');
    await expect(finalizer(client, NAME, { object: stored(), signal }, h)).rejects.toThrow('the cloud is down');
    expect(stored()?.metadata?.finalizers).toEqual([NAME]);
    await finalizer(client, NAME, { object: stored(), signal }, h);
    expect(calls).toEqual(['cleanup', 'cleanup']);
    expect(stored()).toBeUndefined();
  });

  it("race: another writer's finalizer added after our read is never lost; the retry on the fresh object adds ours", async () => {
    const { h } = handlers();
    const readByUs = stored();
    await client.patch('w', 'ns', { metadata: { finalizers: ['other.io/theirs'] } }, 'merge');
    await expect(finalizer(client, NAME, { object: readByUs, signal }, h)).rejects.toMatchObject({ code: 'FINALIZER_PATCH_FAILED', cause: { statusCode: 422 } });
    expect(stored()?.metadata?.finalizers).toEqual(['other.io/theirs']);
    await finalizer(client, NAME, { object: stored(), signal }, h);
    expect(stored()?.metadata?.finalizers).toEqual(['other.io/theirs', NAME]);
  });

  it("race: a finalizer removed by another writer during our cleanup shifts the list; our guarded removal fails and never removes theirs", async () => {
    const { h } = handlers();
    await client.patch('w', 'ns', { metadata: { finalizers: ['other.io/first', NAME, 'other.io/last'] } }, 'merge');
    await client.delete('w', 'ns');
    const readByUs = stored();
    await client.patch('w', 'ns', [{ op: 'remove', path: '/metadata/finalizers/0' }], 'json'); // theirs, concurrently
    await expect(finalizer(client, NAME, { object: readByUs, signal }, h)).rejects.toMatchObject({ code: 'FINALIZER_PATCH_FAILED' });
    expect(stored()?.metadata?.finalizers).toEqual([NAME, 'other.io/last']);
    await finalizer(client, NAME, { object: stored(), signal }, h);
    expect(stored()?.metadata?.finalizers).toEqual(['other.io/last']);
  });

  it('an object being deleted without our finalizer is left alone; a bad name is refused', async () => {
    const { calls, h } = handlers();
    await client.patch('w', 'ns', { metadata: { finalizers: ['other.io/theirs'] } }, 'merge');
    await client.delete('w', 'ns');
    expect(await finalizer(client, NAME, { object: stored(), signal }, h)).toEqual({ kind: 'done' });
    expect(calls).toEqual([]);
    await expect(finalizer(client, 'not a name!', { object: stored(), signal }, h)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});

describe('finalizer() in a controller behind predicates', () => {
  /** Lets I/O and promise chains run (setImmediate turns, never a timer) until `cond()` holds. */
  async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
    for (let i = 0; i < turns; i++) {
      if (cond()) return;
      await flushPromises(1);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it.each([
    ['generationChanged', [predicates.generationChanged]],
    ['labelsChanged', [predicates.labelsChanged]],
  ] as const)("with %s, a new object gets past adding the finalizer (apply runs), and its deletion runs the cleanup", async (_name, preds) => {
    server.resource({ ...widgets, generation: true });
    const stop = new AbortController();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    factory.start(stop.signal);
    const { calls, h } = handlers();
    const controller = Controller.for(factory, widgets, { predicates: [...preds] }).build((_key, ctx) => finalizer(ctx.client(widgets), NAME, ctx, h), { logger: false });
    const running = controller.run(stop.signal);
    try {
      server.create(widgets, { metadata: { name: 'new', namespace: 'ns' }, spec: { size: 1 } });
      await until(() => calls.includes('apply'), 'the apply handler');
      expect(server.get<Widget>(widgets, 'new', 'ns')?.metadata?.finalizers).toEqual([NAME]);
      server.delete(widgets, 'new', 'ns');
      await until(() => server.get<Widget>(widgets, 'new', 'ns') === undefined, 'the cleanup and removal');
      expect(calls).toContain('cleanup');
    } finally {
      stop.abort();
      await running;
    }
  });
});
