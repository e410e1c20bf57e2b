// ensureCustomResourceDefinitions against a scripted client: server-side apply, wait for Established on a FakeClock, clear errors.

import { describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { AbortedError, ApiStatusError } from '../../src/index.js';
import { ApplyConflictError } from '../../src/objects.js';
import { FakeClock, flushPromises } from '../../src/testing/index.js';
import { CustomResourceDefinitionError, ensureCustomResourceDefinitions, waitForCustomResourceDefinitions, type CustomResourceDefinitionClient } from '../../src/crd/index.js';
import { gadgets, widgets } from './definitions.js';

type Condition = { type: string; status: string; reason?: string; message?: string };
type ApplyCall = { config: Parameters<CustomResourceDefinitionClient['apply']>[0]; options: { fieldManager?: string; force?: boolean; signal?: AbortSignal } };

/** A client whose server holds CRDs and reports the conditions `conditions(getCount)` gives. */
function scriptedClient(options: { conditions?: (gets: number) => Condition[]; refuse?: ApiStatusError } = {}) {
  const calls: string[] = [];
  const applied: ApplyCall[] = [];
  const stored = new Map<string, CustomResourceDefinition>();
  let gets = 0;
  const withStatus = (crd: CustomResourceDefinition): CustomResourceDefinition => ({ ...crd, status: { conditions: (options.conditions?.(gets) ?? []) as never } as never });
  const client = {
    apply(config: ApplyCall['config'], opts: ApplyCall['options'] = {}) {
      const name = config.metadata?.name ?? '';
      calls.push(`apply ${name}`);
      applied.push({ config, options: opts });
      if (options.refuse !== undefined) return Promise.reject(options.refuse);
      stored.set(name, config as CustomResourceDefinition);
      return Promise.resolve(withStatus(config as CustomResourceDefinition));
    },
    get(name: string) {
      gets++;
      calls.push(`get ${name}`);
      const crd = stored.get(name);
      return crd === undefined ? Promise.reject(new ApiStatusError(404, 'NotFound')) : Promise.resolve(withStatus(crd));
    },
  };
  return { client, calls, applied };
}

const established: Condition[] = [
  { type: 'NamesAccepted', status: 'True' },
  { type: 'Established', status: 'True' },
];

describe('ensureCustomResourceDefinitions', () => {
  it('applies each CRD and resolves once the server reports Established, polling on the clock', async () => {
    const clock = new FakeClock();
    const { client, calls } = scriptedClient({ conditions: (gets) => (gets >= 2 ? established : [{ type: 'NamesAccepted', status: 'True' }]) });
    let done: CustomResourceDefinition[] | undefined;
    void ensureCustomResourceDefinitions(client, [widgets], { clock, pollIntervalMs: 100 }).then((r) => (done = r));
    await flushPromises();
    expect(done).toBeUndefined();
    await clock.advance(100);
    await flushPromises();
    expect(done).toBeUndefined();
    await clock.advance(100);
    await flushPromises();
    expect(done?.[0].metadata?.name).toBe('widgets.crdtest.kube-informer.dev');
    expect(calls).toEqual(['apply widgets.crdtest.kube-informer.dev', 'get widgets.crdtest.kube-informer.dev', 'get widgets.crdtest.kube-informer.dev']);
  });

  it('applies with force as the client\'s field manager by default; fieldManager and force: false are passed on', async () => {
    const { client, applied } = scriptedClient({ conditions: () => established });
    await ensureCustomResourceDefinitions(client, [widgets, gadgets.crd]);
    expect(applied.map((a) => a.options)).toEqual([
      { force: true, signal: undefined },
      { force: true, signal: undefined },
    ]);
    applied.length = 0;
    await ensureCustomResourceDefinitions(client, [widgets], { fieldManager: 'my-operator', force: false });
    expect(applied.map((a) => a.options)).toEqual([{ fieldManager: 'my-operator', force: false, signal: undefined }]);
  });

  it('sends an apply configuration: apiVersion and kind set, no status and none of the fields the server sets', async () => {
    const { client, applied } = scriptedClient({ conditions: () => established });
    const fromServer: CustomResourceDefinition = {
      ...gadgets.crd,
      apiVersion: undefined as never,
      kind: undefined as never,
      metadata: { ...gadgets.crd.metadata, labels: { team: 'a' }, resourceVersion: '7', uid: 'u', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{ manager: 'kubectl' }] },
      status: { conditions: [{ type: 'Established', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', message: '', reason: '' }] } as never,
    };
    await ensureCustomResourceDefinitions(client, [fromServer]);
    expect(applied[0].config).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.crdtest.kube-informer.dev', labels: { team: 'a' } },
      spec: gadgets.crd.spec,
    });
  });

  it('rejects with the server\'s field errors when it refuses a CRD', async () => {
    const refuse = new ApiStatusError(422, 'CustomResourceDefinition "widgets..." is invalid', {
      reason: 'Invalid',
      status: { details: { causes: [{ field: 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule', message: 'Invalid value: "self.a ==": compilation failed' }] } },
    });
    const { client } = scriptedClient({ refuse });
    const err = await ensureCustomResourceDefinitions(client, [widgets]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as CustomResourceDefinitionError).code).toBe('CRD_NOT_ESTABLISHED');
    expect((err as CustomResourceDefinitionError).crdName).toBe('widgets.crdtest.kube-informer.dev');
    expect((err as CustomResourceDefinitionError).causes).toEqual(['spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "self.a ==": compilation failed']);
    expect((err as Error).cause).toBe(refuse);
  });

  it('rejects with each conflicting field and its manager when an apply without force conflicts', async () => {
    const conflict = new ApplyConflictError(409, 'Apply failed with 1 conflict: conflict with "kubectl" using apiextensions.k8s.io/v1: .spec.versions', [{ manager: 'kubectl', field: '.spec.versions', message: 'conflict with "kubectl" using apiextensions.k8s.io/v1' }], { reason: 'Conflict', fieldManager: 'kube-informer' });
    const { client } = scriptedClient({ refuse: conflict });
    const err = await ensureCustomResourceDefinitions(client, [widgets], { force: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as Error).message).toBe('the API server refused to apply CustomResourceDefinition widgets.crdtest.kube-informer.dev: Apply failed with 1 conflict: conflict with "kubectl" using apiextensions.k8s.io/v1: .spec.versions');
    expect((err as CustomResourceDefinitionError).causes).toEqual(['.spec.versions: owned by kubectl']);
    expect((err as Error).cause).toBe(conflict);
  });

  it('passes other failures through as they are (403: RBAC)', async () => {
    const forbidden = new ApiStatusError(403, 'customresourcedefinitions.apiextensions.k8s.io is forbidden', { reason: 'Forbidden' });
    const { client } = scriptedClient({ refuse: forbidden });
    expect(await ensureCustomResourceDefinitions(client, [widgets]).catch((e: unknown) => e)).toBe(forbidden);
  });

  it('rejects at once when the names are not accepted, and after timeoutMs when Established never comes', async () => {
    const conflict = scriptedClient({ conditions: () => [{ type: 'NamesAccepted', status: 'False', reason: 'ListKindConflict', message: '"WidgetList" is already in use' }] });
    await expect(ensureCustomResourceDefinitions(conflict.client, [widgets])).rejects.toThrow('names not accepted (ListKindConflict): "WidgetList" is already in use');
    const clock = new FakeClock();
    const never = scriptedClient({ conditions: () => [] });
    const result = ensureCustomResourceDefinitions(never.client, [widgets], { clock, timeoutMs: 1000, pollIntervalMs: 300 }).catch((e: unknown) => e);
    for (let i = 0; i < 5; i++) {
      await flushPromises();
      await clock.advance(300);
    }
    const err = await result;
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as Error).message).toBe('CustomResourceDefinition widgets.crdtest.kube-informer.dev did not become Established within 1000 ms (Established: not reported)');
  });

  it('rejects with AbortedError when the signal aborts the wait, and refuses bad options', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const { client } = scriptedClient({ conditions: () => [] });
    const result = ensureCustomResourceDefinitions(client, [widgets], { clock, signal: controller.signal }).catch((e: unknown) => e);
    await flushPromises();
    controller.abort();
    expect(await result).toBeInstanceOf(AbortedError);
    await expect(ensureCustomResourceDefinitions(client, [widgets], { timeoutMs: -1 })).rejects.toThrow('timeoutMs');
    await expect(ensureCustomResourceDefinitions(client, [widgets], { fieldManager: 3 as never })).rejects.toThrow('fieldManager');
    await expect(ensureCustomResourceDefinitions(client, [widgets], { forced: true } as never)).rejects.toThrow('unknown option forced (did you mean force?)');
  });

  it('refuses a CRD whose schema holds client-node model property names (the server would ignore them), naming the key and its path', async () => {
    const { client, calls } = scriptedClient({ conditions: () => established });
    const spec = gadgets.crd.spec;
    const version = spec.versions[0]!;
    const model = {
      ...gadgets.crd,
      spec: { ...spec, versions: [{ ...version, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', x_kubernetes_validations: [{ rule: 'true' }] } } } } }] },
    } as unknown as CustomResourceDefinition;
    const err = await ensureCustomResourceDefinitions(client, [model]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as Error).message).toContain('holds `x_kubernetes_validations` at spec.versions[0].schema.openAPIV3Schema.properties[spec]: a property name of client-node\'s typed models');
    const defaulted = { ...model, spec: { ...model.spec, versions: [{ ...version, schema: { openAPIV3Schema: { type: 'object', properties: { size: { type: 'integer', _default: 1 } } } } }] } } as unknown as CustomResourceDefinition;
    await expect(ensureCustomResourceDefinitions(client, [defaulted])).rejects.toThrow('holds `_default` at spec.versions[0].schema.openAPIV3Schema.properties[size]');
    expect(calls).toEqual([]); // refused before anything is sent
  });

  it('waitForCustomResourceDefinitions writes nothing, asks again after a 503 (a restarting server), and resolves once Established', async () => {
    const clock = new FakeClock();
    const { client, calls } = scriptedClient({ conditions: () => established });
    let reads = 0;
    const restarting: CustomResourceDefinitionClient = {
      apply: client.apply,
      get: (name) => (++reads === 1 ? Promise.reject(new ApiStatusError(503, 'the server is currently unable to handle the request')) : client.get(name)),
    };
    await client.apply({ ...widgets.crd, metadata: widgets.crd.metadata } as never);
    calls.length = 0;
    let done: CustomResourceDefinition[] | undefined;
    void waitForCustomResourceDefinitions(restarting, [widgets], { clock, pollIntervalMs: 100 }).then((r) => (done = r));
    await flushPromises();
    expect(done).toBeUndefined();
    await clock.advance(100);
    await flushPromises();
    expect(done?.map((c) => c.metadata?.name)).toEqual(['widgets.crdtest.kube-informer.dev']);
    expect(calls).toEqual(['get widgets.crdtest.kube-informer.dev']);
    await expect(waitForCustomResourceDefinitions(client, [widgets], { force: true } as never)).rejects.toThrow('unknown option force');
  });
});
