// A controller test bench: a factory over FakeControllerSources on a FakeClock, Widget objects, a log that keeps its lines.

import { afterEach } from 'vitest';
import { FakeClock, type KubeObject } from '../../src/core/index.js';
import type { ResourceDescriptor } from '../../src/core/resources.js';
import { Action, type ReconcileContext } from '../../src/controller/index.js';
import { SharedInformerFactory, gvrKey } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';

export interface Widget extends KubeObject {
  spec?: { size?: number };
  status?: { ready?: boolean };
}

export const widgets: ResourceDescriptor<Widget> = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };

export function widget(name: string, extra: Partial<Widget> = {}, namespace = 'ns'): Widget {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace, generation: 1 }, spec: { size: 1 }, ...extra };
}

export function configMap(name: string, owner?: string, controller = true): KubeObject {
  const ownerReferences = owner === undefined ? undefined : [{ apiVersion: 'example.com/v1', kind: 'Widget', name: owner, uid: `uid-${owner}`, controller }];
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', ownerReferences }, data: {} } as KubeObject;
}

export function memoryLog() {
  const lines: string[] = [];
  const push = (level: string) => (m: string) => void lines.push(`${level}: ${m}`);
  return { lines, logger: { debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error') } };
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Aborts `controller` when the test ends, passed or not. */
export function abortAfterTest(controller: AbortController): AbortController {
  stops.push(() => controller.abort());
  return controller;
}

export function fixture() {
  const clock = new FakeClock();
  const sources = new Map<string, FakeControllerSource<KubeObject>>();
  const informerErrors: Error[] = [];
  const factory = new SharedInformerFactory(undefined, {
    logger: false,
    onError: (_resource, err) => void informerErrors.push(err),
    informerOptions: { clock },
    listWatchFor: (gvr) => {
      const source = new FakeControllerSource<KubeObject>();
      sources.set(gvrKey(gvr), source);
      return source as unknown as ListerWatcher<unknown>;
    },
  });
  const source = (r: ResourceDescriptor<unknown>) => {
    factory.forResource(r);
    return sources.get(gvrKey(r))!;
  };
  const ac = abortAfterTest(new AbortController());
  const log = memoryLog();
  return { clock, factory, source, ac, log, informerErrors };
}

/** Records each reconcile: its key and whether the primary was in the cache. */
export function recorder(result: (key: string, ctx: ReconcileContext<Widget>) => Action | Promise<Action> = () => Action.done()) {
  const seen: Array<[string, boolean]> = [];
  const reconcile = async (key: string, ctx: ReconcileContext<Widget>): Promise<Action> => {
    seen.push([key, ctx.object !== undefined]);
    return result(key, ctx);
  };
  return { seen, reconcile, keys: () => seen.map(([k]) => k) };
}

