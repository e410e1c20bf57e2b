import { describe, expect, it } from 'vitest';
import { describeRule, isCovered, mergePermissions, minimalPermissions, permits, uncoveredUses, type Permission, type PermissionUse } from '../../src/core/index.js';

const cm = (p: Partial<Permission>): Permission => ({ group: '', resource: 'configmaps', verbs: ['get'], reason: 'r', ...p });

describe('mergePermissions', () => {
  it('unites the verbs of one group, resource, subresource, namespace and names, in a fixed order, keeping every reason once', () => {
    const merged = mergePermissions([
      cm({ verbs: ['watch', 'list'], namespace: 'a', reason: 'informer' }),
      cm({ verbs: ['patch', 'get', 'list'], namespace: 'a', reason: 'uses' }),
      cm({ verbs: ['list'], namespace: 'a', reason: 'informer' }),
    ]);
    expect(merged).toEqual([{ group: '', resource: 'configmaps', namespace: 'a', verbs: ['get', 'list', 'watch', 'patch'], reason: 'informer; uses' }]);
  });

  it('keeps apart what differs in subresource, namespace or names, in a stable order (every namespace first)', () => {
    const input = [
      cm({ namespace: 'b' }),
      cm({ subresource: 'status', namespace: 'b' }),
      cm({ resourceNames: ['y', 'x'] }),
      cm({}),
      { group: 'apps', resource: 'deployments', verbs: ['get'], reason: 'r' } satisfies Permission,
      cm({ namespace: 'a' }),
    ];
    const merged = mergePermissions(input);
    expect(merged.map((p) => [p.namespace ?? '*', p.group, p.resource, p.subresource ?? '', (p.resourceNames ?? []).join(',')])).toEqual([
      ['*', '', 'configmaps', '', ''],
      ['*', '', 'configmaps', '', 'x,y'],
      ['*', 'apps', 'deployments', '', ''],
      ['a', '', 'configmaps', '', ''],
      ['b', '', 'configmaps', '', ''],
      ['b', '', 'configmaps', 'status', ''],
    ]);
    expect(mergePermissions([...input].reverse())).toEqual(merged);
  });

  it('drops a permission without verbs', () => {
    expect(mergePermissions([cm({ verbs: [] })])).toEqual([]);
  });
});

describe('minimalPermissions', () => {
  it('drops each verb a wider permission grants: a Role beside a ClusterRole, one name beside every name', () => {
    const out = minimalPermissions([
      cm({ verbs: ['list', 'watch'], reason: 'cluster informer' }),
      cm({ verbs: ['get', 'list', 'watch'], namespace: 'a', reason: 'uses' }),
      { group: 'coordination.k8s.io', resource: 'leases', namespace: 'a', verbs: ['get', 'update'], resourceNames: ['lock'], reason: 'lock' },
      { group: 'coordination.k8s.io', resource: 'leases', namespace: 'a', verbs: ['update', 'create', 'list'], reason: 'ring' },
    ]);
    expect(out.map((p) => [p.namespace ?? '*', p.resource, p.verbs.join(','), p.resourceNames?.join(',') ?? ''])).toEqual([
      ['*', 'configmaps', 'list,watch', ''],
      ['a', 'configmaps', 'get', ''],
      ['a', 'leases', 'list,create,update', ''],
      ['a', 'leases', 'get', 'lock'],
    ]);
  });

  it('keeps a permission of another subresource or namespace', () => {
    const input = [cm({ namespace: 'a' }), cm({ namespace: 'b' }), cm({ namespace: 'a', subresource: 'status' })];
    expect(minimalPermissions(input)).toHaveLength(3);
  });
});

describe('permits', () => {
  const use: PermissionUse = { verb: 'get', group: '', resource: 'configmaps', namespace: 'a', name: 'x' };
  it('allows a use in its namespace, or any namespace when it has none, of its names only', () => {
    expect(permits(cm({ namespace: 'a' }), use)).toBe(true);
    expect(permits(cm({}), use)).toBe(true);
    expect(permits(cm({ namespace: 'b' }), use)).toBe(false);
    expect(permits(cm({ resourceNames: ['x'] }), use)).toBe(true);
    expect(permits(cm({ resourceNames: ['y'] }), use)).toBe(false);
  });

  it('refuses another verb, subresource or group, and a use across namespaces to a namespaced permission', () => {
    expect(permits(cm({ verbs: ['list'] }), use)).toBe(false);
    expect(permits(cm({ subresource: 'status' }), use)).toBe(false);
    expect(permits(cm({ group: 'x' }), use)).toBe(false);
    expect(permits(cm({ verbs: ['list'], namespace: 'a' }), { verb: 'list', group: '', resource: 'configmaps' })).toBe(false);
  });

  it('refuses a create by POST (no name) to a permission narrowed by names, as RBAC does', () => {
    expect(permits(cm({ verbs: ['create'], resourceNames: ['x'] }), { verb: 'create', group: '', resource: 'configmaps', namespace: 'a' })).toBe(false);
    expect(isCovered([cm({ verbs: ['create'] })], { verb: 'create', group: '', resource: 'configmaps', namespace: 'a' })).toBe(true);
  });
});

describe('uncoveredUses', () => {
  it('returns each use no permission allows, once, in a stable order', () => {
    const uses: PermissionUse[] = [
      { verb: 'patch', group: '', resource: 'configmaps', namespace: 'a', name: 'x' },
      { verb: 'get', group: '', resource: 'configmaps', namespace: 'a', name: 'x' },
      { verb: 'create', group: '', resource: 'configmaps', namespace: 'a' },
      { verb: 'patch', group: '', resource: 'configmaps', namespace: 'a', name: 'x' },
    ];
    expect(uncoveredUses(uses, [cm({ namespace: 'a' })])).toEqual([
      { verb: 'create', group: '', resource: 'configmaps', namespace: 'a' },
      { verb: 'patch', group: '', resource: 'configmaps', namespace: 'a', name: 'x' },
    ]);
    expect(uncoveredUses(uses, [cm({ verbs: ['get', 'create', 'patch'] })])).toEqual([]);
  });
});

describe('describeRule', () => {
  it('names the rule in RBAC words', () => {
    expect(describeRule({ verb: 'create', group: '', resource: 'configmaps', namespace: 'x' })).toBe('apiGroups: [""], resources: ["configmaps"], verbs: ["create"] in namespace x');
    expect(describeRule({ verb: 'patch', group: 'example.com', resource: 'widgets', subresource: 'status' })).toBe(
      'apiGroups: ["example.com"], resources: ["widgets/status"], verbs: ["patch"] cluster-wide (a ClusterRole)',
    );
  });
});
