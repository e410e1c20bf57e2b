// Predicates and owner mapping: what counts as a change, and which primary a child belongs to.

import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown } from '../../src/core/keys.js';
import { controllerOwnerKey, predicates, refKey, unwrapTombstone, type ChangeEvent, type ReconcileReason } from '../../src/controller/index.js';
import { sourceHandler } from '../../src/controller/sources.js';

const { allOf, annotationsChanged, anyOf, generationChanged, labelsChanged, not, resourceVersionChanged } = predicates;

type Obj = { metadata: { generation?: number; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> } };

const update = (oldMeta: Obj['metadata'], newMeta: Obj['metadata']): ChangeEvent<unknown> => ({ type: 'update', oldObject: { metadata: oldMeta }, object: { metadata: newMeta } });
const add: ChangeEvent<unknown> = { type: 'add', object: { metadata: {} } };
const del: ChangeEvent<unknown> = { type: 'delete', object: { metadata: {} } };

describe('predicates', () => {
  it('generationChanged: passes a spec change, drops a status-only change, passes when a side has no generation', () => {
    expect(generationChanged(update({ generation: 1 }, { generation: 2 }))).toBe(true);
    expect(generationChanged(update({ generation: 2, resourceVersion: '1' }, { generation: 2, resourceVersion: '2' }))).toBe(false);
    expect(generationChanged(update({ resourceVersion: '1' }, { resourceVersion: '2' }))).toBe(true);
    expect(generationChanged(update({ generation: 1 }, {}))).toBe(true);
    expect(generationChanged(add)).toBe(true);
    expect(generationChanged(del)).toBe(true);
  });

  it('labelsChanged and annotationsChanged compare the maps by content', () => {
    expect(labelsChanged(update({ labels: { a: '1' } }, { labels: { a: '1' } }))).toBe(false);
    expect(labelsChanged(update({ labels: { a: '1' } }, { labels: { a: '2' } }))).toBe(true);
    expect(labelsChanged(update({}, { labels: { a: '1' } }))).toBe(true);
    expect(labelsChanged(update({ labels: {} }, {}))).toBe(false);
    expect(labelsChanged(update({ labels: { a: '1' } }, { labels: { b: '1' } }))).toBe(true);
    expect(annotationsChanged(update({ annotations: { x: 'y' } }, { annotations: { x: 'y' }, labels: { a: 'b' } }))).toBe(false);
    expect(annotationsChanged(update({ annotations: { x: 'y' } }, {}))).toBe(true);
  });

  it('resourceVersionChanged drops the re-delivery of a resync', () => {
    expect(resourceVersionChanged(update({ resourceVersion: '5' }, { resourceVersion: '5' }))).toBe(false);
    expect(resourceVersionChanged(update({ resourceVersion: '5' }, { resourceVersion: '6' }))).toBe(true);
  });

  it('allOf, anyOf and not combine predicates', () => {
    const statusOnly = update({ generation: 1, resourceVersion: '1' }, { generation: 1, resourceVersion: '2', labels: { a: 'b' } });
    expect(anyOf(generationChanged, labelsChanged)(statusOnly)).toBe(true);
    expect(allOf(generationChanged, labelsChanged)(statusOnly)).toBe(false);
    expect(not(generationChanged)(statusOnly)).toBe(true);
    expect(allOf()(statusOnly)).toBe(true);
    expect(anyOf()(statusOnly)).toBe(false);
  });
});

describe('the finalizer rule: an update of the primary that changes its finalizers or deletionTimestamp passes whatever the predicates', () => {
  const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
  const obj = (metadata: Record<string, unknown>) => ({ metadata: { name: 'w', namespace: 'ns', generation: 1, resourceVersion: '1', ...metadata } });
  function handlerOf(role: 'for' | 'owns') {
    const keys: string[] = [];
    const source = { role, resource: widgets, keys: () => ['ns/w'], predicates: [generationChanged], cache: {}, informer: undefined as never };
    const h = sourceHandler(source, (key: string, _reason: ReconcileReason) => void keys.push(key));
    return { keys, update: (o: unknown, n: unknown) => h.onUpdate?.(o, n) };
  }

  it('passes for the primary: a finalizer added or removed, a deletionTimestamp set; drops what the predicate drops otherwise', () => {
    const { keys, update } = handlerOf('for');
    update(obj({}), obj({ finalizers: ['example.com/f'] }));
    update(obj({ finalizers: ['example.com/f'] }), obj({ finalizers: [] }));
    update(obj({ finalizers: ['a/b', 'c/d'] }), obj({ finalizers: ['c/d', 'a/b'] }));
    update(obj({}), obj({ deletionTimestamp: '2026-01-01T00:00:00Z' }));
    expect(keys).toHaveLength(4 * 2); // both states of each update
    update(obj({ resourceVersion: '1' }), obj({ resourceVersion: '2', labels: { a: 'b' } }));
    update(obj({ finalizers: ['a/b'] }), obj({ finalizers: ['a/b'], resourceVersion: '2' }));
    expect(keys).toHaveLength(8);
  });

  it("not for an owned resource: its predicates decide", () => {
    const { keys, update } = handlerOf('owns');
    update(obj({}), obj({ finalizers: ['example.com/f'] }));
    expect(keys).toEqual([]);
  });
});

describe('owner mapping', () => {
  const widgets = { group: 'example.com', kind: 'Widget', namespaced: true };
  const child = (refs: unknown[], namespace = 'ns') => ({ metadata: { name: 'c', namespace, ownerReferences: refs } });

  it('maps a child to its controlling owner of the primary group and kind, any version, in its namespace', () => {
    expect(controllerOwnerKey(child([{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', controller: true }]), widgets)).toBe('ns/w');
    expect(controllerOwnerKey(child([{ apiVersion: 'example.com/v2beta1', kind: 'Widget', name: 'w', controller: true }]), widgets)).toBe('ns/w');
  });

  it('ignores owners that are not the controller, or of another group or kind; a cluster-scoped owner is keyed by name', () => {
    expect(controllerOwnerKey(child([{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w' }]), widgets)).toBeUndefined();
    expect(controllerOwnerKey(child([{ apiVersion: 'other.com/v1', kind: 'Widget', name: 'w', controller: true }]), widgets)).toBeUndefined();
    expect(controllerOwnerKey(child([{ apiVersion: 'v1', kind: 'Widget', name: 'w', controller: true }]), widgets)).toBeUndefined();
    expect(controllerOwnerKey(child([{ apiVersion: 'example.com/v1', kind: 'Gadget', name: 'w', controller: true }]), widgets)).toBeUndefined();
    expect(controllerOwnerKey({ metadata: {} }, widgets)).toBeUndefined();
    expect(controllerOwnerKey(null, widgets)).toBeUndefined();
    const nodes = { group: '', kind: 'Node', namespaced: false };
    expect(controllerOwnerKey(child([{ apiVersion: 'v1', kind: 'Node', name: 'n1', controller: true }]), nodes)).toBe('n1');
  });

  it('refKey and unwrapTombstone', () => {
    expect(refKey('ns/a')).toBe('ns/a');
    expect(refKey({ name: 'a' })).toBe('a');
    expect(refKey({ name: 'a', namespace: '' })).toBe('a');
    expect(refKey({ name: 'a', namespace: 'ns' })).toBe('ns/a');
    const obj = { metadata: { name: 'a' } };
    expect(unwrapTombstone(new DeletedFinalStateUnknown('a', obj))).toBe(obj);
    expect(unwrapTombstone(obj)).toBe(obj);
  });
});
