// The manager's `crds` option (issue 27): CRDs installed by server-side apply before the informers start, Established awaited, a refusal rejecting run() at once.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { FakeClock } from '../../src/core/index.js';
import { ApiStatusError, newResourceClient, resources, SharedInformerFactory } from '../../src/index.js';
import type { Runnable } from '../../src/controller.js';
import { CustomResourceDefinitionError, type CustomResourceDefinitionClient } from '../../src/crd/index.js';
import { Manager } from '../../src/operations/index.js';
import { FakeControllerSource, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';
import { gadgets, widgets } from '../crd/definitions.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const newFactory = () => new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } } });
/** A runnable that counts its runs and runs until its signal aborts. */
const waiter = (runs: { n: number }): Runnable => ({ name: 'c', run: (s) => new Promise<void>((resolve) => (runs.n++, s.addEventListener('abort', () => resolve(), { once: true }))) });

const established = (crd: CustomResourceDefinition): CustomResourceDefinition => ({
  ...crd,
  status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }] } as never,
});

/** A client that records each apply (the fake API server makes CRDs Established itself, as kube-apiserver does). */
function establishingClient(calls: string[]): CustomResourceDefinitionClient & { close(): void } {
  const real = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
  return {
    apply: async (config, options) => {
      calls.push(`apply ${config.metadata.name} force=${String(options?.force)} manager=${options?.fieldManager ?? '(client)'}`);
      return established(await real.apply(config, options));
    },
    get: async (name, namespace, options) => established(await real.get(name, namespace, options)),
    close: () => real.close(),
  };
}

describe('Manager: installing CRDs at start (crds)', () => {
  it('applies each CRD and waits for Established before the informers start; the custom resource\'s informer then syncs at once', async () => {
    const calls: string[] = [];
    const client = establishingClient(calls);
    const factory = newFactory();
    const informer = factory.forResource(widgets.descriptor);
    const runs = { n: 0 };
    const log = memoryLog();
    const manager = new Manager(factory, { crds: [widgets, gadgets], crdInstall: { client, fieldManager: 'my-operator' }, controllers: [waiter(runs)], logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.phase === 'running' && runs.n === 1, 'the controllers to run');
    expect(calls).toEqual(['apply widgets.crdtest.kube-informer.dev force=true manager=my-operator', 'apply gadgets.crdtest.kube-informer.dev force=true manager=my-operator']);
    expect(informer.hasSynced()).toBe(true);
    // The first request for widgets is the informer's list (a streaming list: a watch), after both CRDs were applied, and it was answered: no 404 and retry.
    const requests = server.requests().filter((r) => r.resource === 'widgets' || r.resource === 'customresourcedefinitions');
    expect(requests.slice(0, 3).map((r) => `${r.verb} ${r.resource}`)).toEqual(['patch customresourcedefinitions', 'patch customresourcedefinitions', 'watch widgets']);
    expect(requests.filter((r) => r.resource === 'widgets' && (r.verb === 'list' || r.query.sendInitialEvents === 'true'))).toHaveLength(1);
    expect(log.lines).toContain('info: manager: installing 2 CustomResourceDefinitions (server-side apply): widgets.crdtest.kube-informer.dev, gadgets.crdtest.kube-informer.dev');
    expect(log.lines).toContain('info: manager: CustomResourceDefinitions established: widgets.crdtest.kube-informer.dev, gadgets.crdtest.kube-informer.dev');
    stop.abort();
    await running;
    client.close();
  });

  it('rejects run() at once with the server\'s refusal, starting no informer and no controller', async () => {
    const refusal = new ApiStatusError(422, 'CustomResourceDefinition.apiextensions.k8s.io "widgets.crdtest.kube-informer.dev" is invalid', {
      reason: 'Invalid',
      status: { details: { causes: [{ field: 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule', message: 'compilation failed' }] } },
    });
    const client: CustomResourceDefinitionClient = { apply: () => Promise.reject(refusal), get: () => Promise.reject(new Error('not called')) };
    const factory = newFactory();
    factory.forResource(widgets.descriptor);
    const runs = { n: 0 };
    const log = memoryLog();
    const manager = new Manager(factory, { crds: [widgets], crdInstall: { client }, controllers: [waiter(runs)], probes: { port: 0, host: '127.0.0.1' }, logger: log.logger });
    const err = await manager.run(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect(err).toMatchObject({ code: 'CRD_NOT_ESTABLISHED', crdName: 'widgets.crdtest.kube-informer.dev', causes: ['spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: compilation failed'], cause: refusal });
    expect(runs.n).toBe(0);
    expect(server.requests().filter((r) => r.resource === 'widgets')).toEqual([]);
    expect(manager.phase).toBe('stopped');
    expect(manager.probeUrl).toBeUndefined();
    expect(log.lines.find((l) => l.startsWith('error: manager stopped'))).toContain('the API server refused CustomResourceDefinition widgets.crdtest.kube-informer.dev');
  });

  it('installs with the factory\'s kubeConfig when no client is given: the fake server makes the CRD Established and the controllers run', async () => {
    const clock = new FakeClock();
    const runs = { n: 0 };
    const manager = new Manager(newFactory(), { crds: [gadgets], controllers: [waiter(runs)], clock, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    for (let i = 0; i < 200 && runs.n === 0; i++) {
      await clock.advance(250); // the install polls the CRD's conditions on the manager's clock
      for (let t = 0; t < 50; t++) await new Promise((resolve) => setImmediate(resolve)); // the HTTP round trips
    }
    expect(runs.n).toBe(1);
    const applied = server.requests().find((r) => r.resource === 'customresourcedefinitions' && r.verb === 'patch');
    expect(applied?.query).toMatchObject({ fieldManager: 'kube-informer', force: 'true' });
    stop.abort();
    await running;
  });

  it('gives up after crdInstall.timeoutMs on its clock when Established never comes', async () => {
    const clock = new FakeClock();
    const real = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const notEstablished = (crd: CustomResourceDefinition): CustomResourceDefinition => ({ ...crd, status: undefined as never });
    // A server that stores the CRD but whose apiextensions controller never reports it Established.
    const client: CustomResourceDefinitionClient = {
      apply: async (config, options) => notEstablished(await real.apply(config, options)),
      get: async (name, namespace, options) => notEstablished(await real.get(name, namespace, options)),
    };
    const manager = new Manager(newFactory(), { crds: [gadgets], crdInstall: { client, timeoutMs: 5_000 }, clock, logger: false });
    const running = manager.run(new AbortController().signal).catch((e: unknown) => e);
    await until(() => server.get('customresourcedefinitions.apiextensions.k8s.io', 'gadgets.crdtest.kube-informer.dev') !== undefined, 'the CRD to be applied');
    for (let i = 0; i < 25 && manager.phase !== 'stopped'; i++) {
      await clock.advance(250);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const err = await running;
    real.close();
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as Error).message).toBe('CustomResourceDefinition gadgets.crdtest.kube-informer.dev did not become Established within 5000 ms (Established: not reported)');
  });

  it('stops cleanly, resolving run(), when its signal aborts while it waits for Established', async () => {
    const clock = new FakeClock();
    let applied = 0;
    const client: CustomResourceDefinitionClient = {
      apply: (config) => (applied++, Promise.resolve(config as CustomResourceDefinition)),
      get: (name) => Promise.resolve({ ...gadgets.crd, metadata: { name } }),
    };
    const runs = { n: 0 };
    const manager = new Manager(newFactory(), { crds: [gadgets], crdInstall: { client }, controllers: [waiter(runs)], clock, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => applied === 1, 'the apply');
    await clock.advance(1_000);
    stop.abort();
    await running;
    expect(manager.phase).toBe('stopped');
    expect(runs.n).toBe(0);
  });

  it('validates crds and crdInstall, and needs a client when the factory has no kubeConfig', () => {
    const factory = newFactory();
    const bad = (options: unknown) => () => new Manager(factory, options as never);
    expect(bad({ crds: widgets })).toThrow('Manager: option crds must be an array of definitions (defineCustomResource) or CustomResourceDefinition objects');
    expect(bad({ crds: [{ name: 'x' }] })).toThrow('Manager: option crds must be an array of definitions');
    expect(bad({ crds: [widgets], crdInstall: { timeout: 1 } })).toThrow('Manager: unknown option crdInstall.timeout (did you mean crdInstall.timeoutMs?)');
    expect(bad({ crds: [widgets], crdInstall: { force: 'yes' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    const noKubeConfig = new SharedInformerFactory(undefined, { listWatchFor: () => new FakeControllerSource() });
    expect(() => new Manager(noKubeConfig, { crds: [widgets] })).toThrow('Manager: option crds needs crdInstall.client: the factory was built without a kubeConfig');
    expect(() => new Manager(noKubeConfig, { crds: [widgets], crdInstall: { client: { apply: () => Promise.reject(new Error('x')), get: () => Promise.reject(new Error('x')) } } })).not.toThrow();
    expect(() => new Manager(noKubeConfig, { crds: [] })).not.toThrow();
  });
});
