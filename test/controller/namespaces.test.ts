// A Controller over a namespace set (option `namespaces`) on the fake API server: namespaces added and
// removed while it runs — an added one costs one list per cached resource and reconciles each of its
// primaries once, a removed one reconciles nothing (its deletes and its pending requests are dropped), the
// others are never listed again; a forbidden namespace is loud while the others reconcile.

import { describe, expect, it } from 'vitest';
import { Action, Controller } from '../../src/controller/index.js';
import { resources, SharedInformerFactory, type KubeObject } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from '../listwatch/helpers.js';
import { until } from '../examples/helpers.js';

const { cleanups } = useCleanups();

function cm(namespace: string, name: string, owner?: KubeObject): KubeObject {
  const metadata: KubeObject['metadata'] = { name, namespace };
  if (owner !== undefined) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Secret', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }];
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata };
}

/** Lists (and streaming lists, where the server serves them) of `resource` in `namespace`. */
function lists(fake: FakeApiServer, resource: string, namespace: string): number {
  return fake.requests().filter((r) => r.resource === resource && r.namespace === namespace && (r.verb === 'list' || (r.verb === 'watch' && r.query.sendInitialEvents === 'true'))).length;
}

async function start(fake: FakeApiServer, namespaces: string[]) {
  // One refused list is enough to call a namespace unreadable (the default waits for three).
  const reconciled: string[] = [];
  const warnings: string[] = [];
  const logger = { debug: () => {}, info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
  // The factory's namespace sets warn through the factory's logger.
  const factory = new SharedInformerFactory(fake.kubeConfig, { logger, informerOptions: { syncFailureThreshold: 1 } });
  const controller = Controller.for(factory, resources.secrets)
    .owns(resources.configmaps)
    .build(async (key) => {
      reconciled.push(key);
      return Action.done();
    }, { name: 'secrets', namespaces, logger });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = controller.run(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
  });
  return { controller, reconciled, warnings, factory };
}

describe('Controller with the namespaces option', () => {
  it('refuses an empty set, a namespace twice, the option with a namespaced factory; addNamespace without the option', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    const newFactory = (): SharedInformerFactory => new SharedInformerFactory(fake.kubeConfig, { logger: false });
    const build = (namespaces: readonly string[], f = newFactory()) => Controller.for(f, resources.secrets).build(async () => Action.done(), { namespaces, logger: false });
    expect(() => build([])).toThrow(/option namespaces must be a non-empty array of namespace names/);
    expect(() => build(['a', 'a'])).toThrow(/lists a twice/);
    expect(() => build(['a'], new SharedInformerFactory(fake.kubeConfig, { logger: false, namespace: 'x' }))).toThrow(/option namespaces cannot be combined with a factory with a namespace \(x\)/);
    const plain = Controller.for(newFactory(), resources.secrets).build(async () => Action.done(), { logger: false });
    expect(() => plain.addNamespace('a')).toThrow(/addNamespace needs a namespace set/);
    expect(plain.namespaces()).toBeUndefined();
    const c = build(['b', 'a']);
    expect(c.namespaces()).toEqual(['a', 'b']);
    expect(() => c.addNamespace('a')).toThrow(/the namespace is in the set already/);
    expect(() => c.removeNamespace('z')).toThrow(/the namespace is not in the set/);
    const reads = c.permissions().filter((p) => p.verbs.includes('list')).map((p) => `${p.resource}@${p.namespace ?? '*'}`).sort();
    expect(reads).toEqual(['secrets@a', 'secrets@b']);
  });

  it('adds a namespace with one list per cached resource and reconciles its primaries once; removes one reconciling nothing of it; never lists the others again', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (const ns of ['a', 'b', 'c']) {
      for (const name of ['s1', 's2']) {
        const secret = fake.create(resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns } } as KubeObject);
        fake.create(resources.configmaps, cm(ns, `${name}-child`, secret));
      }
    }
    const { controller, reconciled } = await start(fake, ['a', 'b']);
    await until(() => reconciled.length === 4, 'a and b reconciled');
    expect([...reconciled].sort()).toEqual(['a/s1', 'a/s2', 'b/s1', 'b/s2']);
    expect(lists(fake, 'secrets', 'c') + lists(fake, 'configmaps', 'c')).toBe(0);
    const before = { a: lists(fake, 'secrets', 'a') + lists(fake, 'configmaps', 'a'), b: lists(fake, 'secrets', 'b') + lists(fake, 'configmaps', 'b') };
    expect(before).toEqual({ a: 2, b: 2 });

    reconciled.length = 0;
    controller.addNamespace('c');
    await until(() => reconciled.length === 2, 'c reconciled');
    await new Promise((r) => setTimeout(r, 50));
    expect([...reconciled].sort()).toEqual(['c/s1', 'c/s2']); // each once
    expect(lists(fake, 'secrets', 'c')).toBe(1);
    expect(lists(fake, 'configmaps', 'c')).toBe(1);

    // A request pending for a key of a (delayed), then a removed: neither it nor a's deletes reconcile.
    reconciled.length = 0;
    controller.schedule('a/s1', { delayMs: 30 });
    controller.removeNamespace('a');
    expect(controller.namespaces()).toEqual(['b', 'c']);
    fake.update(resources.secrets, { ...fake.get(resources.secrets, 's1', 'b')!, data: { k: 'dg==' } } as KubeObject);
    await until(() => reconciled.includes('b/s1'), 'b/s1 reconciled after its change');
    await new Promise((r) => setTimeout(r, 100));
    expect(reconciled.filter((k) => k.startsWith('a/'))).toEqual([]);
    expect(lists(fake, 'secrets', 'a') + lists(fake, 'configmaps', 'a')).toBe(2); // no relist of a
    expect(lists(fake, 'secrets', 'b') + lists(fake, 'configmaps', 'b')).toBe(2); // nor of the others
    expect(lists(fake, 'secrets', 'c') + lists(fake, 'configmaps', 'c')).toBe(2);
    expect(controller.permissions().filter((p) => p.resource === 'secrets' && p.verbs.includes('watch')).map((p) => p.namespace)).toEqual(['b', 'c']);
  });

  it('a forbidden namespace is loud while the others reconcile', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (const ns of ['open', 'closed']) fake.create(resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns } } as KubeObject);
    // Both requests a list can be are refused: the streaming list's watch (the default) and the paged list it falls back to.
    for (let i = 0; i < 50; i++) for (const verb of ['watch', 'list'] as const) fake.injectFault({ verb, resource: 'secrets', namespace: 'closed', type: 'status', code: 403, message: 'secrets is forbidden in the namespace "closed"' });
    const { reconciled, warnings } = await start(fake, ['closed', 'open']);
    await until(() => reconciled.includes('open/s'), 'open reconciled', 500_000);
    expect(reconciled).not.toContain('closed/s');
    await until(() => warnings.some((w) => w.includes('namespace closed cannot sync')), 'the warning naming closed', 500_000);
  }, 20_000);
});
