// Owner references, after controller-runtime's pkg/controller/controllerutil/controllerutil_test.go (our own cases and words).

import { describe, expect, it } from 'vitest';
import { AlreadyOwnedError, getControllerOf, hasOwnerReference, removeOwnerReference, setControllerReference, setOwnerReference, type OwnedLike } from '../../src/objects.js';

const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'foo', uid: 'foo-uid', namespace: 'ns' } };
const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bar', uid: 'bar-uid', namespace: 'ns' } };
const clusterRole = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'role', uid: 'role-uid' } };
const pod = (): OwnedLike => ({ metadata: { name: 'p', namespace: 'ns' } });

describe('setControllerReference', () => {
  it('sets a controller reference with blockOwnerDeletion from the owner’s apiVersion, kind, name and uid', () => {
    const child = setControllerReference(rs, pod());
    expect(child.metadata?.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'foo', uid: 'foo-uid', controller: true, blockOwnerDeletion: true }]);
    expect(getControllerOf(child)?.name).toBe('foo');
  });

  it('keeps other owner references, and replaces (never duplicates) a reference to the same owner', () => {
    const child = setOwnerReference(deploy, pod());
    setOwnerReference(rs, child);
    setControllerReference(rs, child);
    setControllerReference({ ...rs, apiVersion: 'apps/v1beta2' }, child); // same group, kind and name: the same owner
    expect(child.metadata?.ownerReferences?.map((r) => [r.kind, r.apiVersion, r.controller])).toEqual([
      ['Deployment', 'apps/v1', undefined],
      ['ReplicaSet', 'apps/v1beta2', true],
    ]);
  });

  it('refuses a second controller with AlreadyOwnedError, leaving the object as it was', () => {
    const child = setControllerReference(deploy, pod());
    const before = structuredClone(child);
    let err: unknown;
    try {
      setControllerReference(rs, child);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AlreadyOwnedError);
    expect(err).toMatchObject({ code: 'ALREADY_OWNED', existing: { kind: 'Deployment', name: 'bar' }, message: expect.stringMatching(/already controlled by Deployment bar/) });
    expect(child).toEqual(before);
  });

  it('refuses a cross-namespace owner with INVALID_OPTION naming both namespaces', () => {
    expect(() => setControllerReference(rs, { metadata: { name: 'p', namespace: 'other' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/cross-namespace.*namespace ns.*in other/) }),
    );
  });

  it('refuses a namespaced owner of a cluster-scoped object, and allows a cluster-scoped owner of a namespaced one', () => {
    expect(() => setControllerReference(rs, { metadata: { name: 'node-x' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/cluster-scoped/) }));
    expect(setControllerReference(clusterRole, pod()).metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ClusterRole', controller: true });
    expect(setControllerReference(clusterRole, { metadata: { name: 'binding' } } as OwnedLike).metadata?.ownerReferences).toHaveLength(1);
  });

  it('refuses an owner without apiVersion, kind, name or uid', () => {
    expect(() => setControllerReference({ metadata: { name: 'x', namespace: 'ns' } }, pod())).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/needs apiVersion, kind, metadata.uid/) }),
    );
  });

  it('takes blockOwnerDeletion: false, and refuses an unknown option value', () => {
    expect(setControllerReference(rs, pod(), { blockOwnerDeletion: false }).metadata?.ownerReferences?.[0].blockOwnerDeletion).toBe(false);
    expect(() => setControllerReference(rs, pod(), { blockOwnerDeletion: 'yes' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('setOwnerReference, removeOwnerReference, hasOwnerReference', () => {
  it('sets a plain owner reference (no controller flag), alongside an existing controller', () => {
    const child = setControllerReference(deploy, pod());
    setOwnerReference(rs, child);
    expect(child.metadata?.ownerReferences?.[1]).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'foo', uid: 'foo-uid' });
    expect(hasOwnerReference(rs, child)).toBe(true);
    expect(hasOwnerReference(rs, child, true)).toBe(false);
    expect(hasOwnerReference(deploy, child, true)).toBe(true);
  });

  it('removes the reference to an owner, and says false when there was none', () => {
    const child = setOwnerReference(rs, setOwnerReference(deploy, pod()));
    expect(removeOwnerReference(rs, child)).toBe(true);
    expect(child.metadata?.ownerReferences?.map((r) => r.kind)).toEqual(['Deployment']);
    expect(removeOwnerReference(rs, child)).toBe(false);
    expect(removeOwnerReference(rs, {})).toBe(false);
  });
});
