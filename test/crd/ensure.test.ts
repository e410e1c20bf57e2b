// ensureCustomResourceDefinitions against a scripted client: create or replace, wait for Established on a FakeClock, clear errors.

import { describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { AbortedError, ApiStatusError } from '../../src/index.js';
import { FakeClock, flushPromises } from '../../src/testing/index.js';
import { CustomResourceDefinitionError, ensureCustomResourceDefinitions } from '../../src/crd/index.js';
import { gadgets, widgets } from './definitions.js';

type Condition = { type: string; status: string; reason?: string; message?: string };

/** A client whose server holds CRDs and reports the conditions `conditionsAfter(getCount)` gives. */
function scriptedClient(options: { existing?: string[]; conditions?: (gets: number) => Condition[]; refuse?: ApiStatusError } = {}) {
  const calls: string[] = [];
  const stored = new Map<string, CustomResourceDefinition>();
  for (const name of options.existing ?? []) stored.set(name, { ...widgets.crd, metadata: { name, resourceVersion: '7' } });
  let gets = 0;
  const withStatus = (crd: CustomResourceDefinition): CustomResourceDefinition => ({ ...crd, status: { conditions: (options.conditions?.(gets) ?? []) as never } as never });
  const client = {
    create(crd: CustomResourceDefinition) {
      const name = crd.metadata?.name ?? '';
      calls.push(`create ${name}`);
      if (options.refuse !== undefined) return Promise.reject(options.refuse);
      if (stored.has(name)) return Promise.reject(new ApiStatusError(409, 'AlreadyExists', { reason: 'AlreadyExists' }));
      stored.set(name, crd);
      return Promise.resolve(withStatus(crd));
    },
    replace(crd: CustomResourceDefinition) {
      calls.push(`replace ${crd.metadata?.name} rv=${crd.metadata?.resourceVersion}`);
      stored.set(crd.metadata?.name ?? '', crd);
      return Promise.resolve(withStatus(crd));
    },
    get(name: string) {
      gets++;
      calls.push(`get ${name}`);
      const crd = stored.get(name);
      return crd === undefined ? Promise.reject(new ApiStatusError(404, 'NotFound')) : Promise.resolve(withStatus(crd));
    },
  };
  return { client, calls };
}

const established: Condition[] = [
  { type: 'NamesAccepted', status: 'True' },
  { type: 'Established', status: 'True' },
];

describe('ensureCustomResourceDefinitions', () => {
  it('creates each CRD and resolves once the server reports Established, polling on the clock', async () => {
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
    expect(calls).toEqual(['create widgets.crdtest.kube-informer.dev', 'get widgets.crdtest.kube-informer.dev', 'get widgets.crdtest.kube-informer.dev']);
  });

  it('replaces a CRD that exists, with its resourceVersion', async () => {
    const { client, calls } = scriptedClient({ existing: ['gadgets.crdtest.kube-informer.dev'], conditions: () => established });
    await ensureCustomResourceDefinitions(client, [gadgets.crd]);
    expect(calls).toEqual(['create gadgets.crdtest.kube-informer.dev', 'get gadgets.crdtest.kube-informer.dev', 'replace gadgets.crdtest.kube-informer.dev rv=7']);
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
    expect((err as CustomResourceDefinitionError).causes).toEqual(['spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "self.a ==": compilation failed']);
    expect((err as Error).cause).toBe(refuse);
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
  });
});
