import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import { combineSelectors, listQuery, resourcePath, watchQuery } from '../../src/listwatch/index.js';

function params(query: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(query));
}

describe('resourcePath', () => {
  it('builds core-group paths under /api, across all namespaces or in one', () => {
    const pods = { group: '', version: 'v1', resource: 'pods' };
    expect(resourcePath(pods)).toBe('/api/v1/pods');
    expect(resourcePath(pods, '')).toBe('/api/v1/pods');
    expect(resourcePath(pods, 'kube-system')).toBe('/api/v1/namespaces/kube-system/pods');
  });

  it('builds named-group and CRD paths under /apis', () => {
    expect(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments' }, 'prod')).toBe(
      '/apis/apps/v1/namespaces/prod/deployments',
    );
    expect(resourcePath({ group: 'stable.example.com', version: 'v1beta1', resource: 'crontabs' }, 'a')).toBe(
      '/apis/stable.example.com/v1beta1/namespaces/a/crontabs',
    );
  });

  it('refuses a namespace that is not a string with INVALID_OPTION naming it (get(name, { namespace }) is a common slip), not a TypeError', () => {
    const pods = { group: '', version: 'v1', resource: 'pods' };
    expect(() => resourcePath(pods, { namespace: 'a' } as never)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, message: expect.stringContaining('namespace must be a string (a path segment), got object {"namespace":"a"}') as unknown }) as unknown as Error);
  });

  it('builds cluster-scoped paths without a namespace segment', () => {
    expect(resourcePath({ group: '', version: 'v1', resource: 'nodes' })).toBe('/api/v1/nodes');
    expect(resourcePath({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' })).toBe(
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    );
  });

  it('rejects empty segments and segments with a slash', () => {
    expect(() => resourcePath({ group: '', version: '', resource: 'pods' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => resourcePath({ group: '', version: 'v1', resource: 'pods/log' })).toThrow(/gvr.resource/);
    expect(() => resourcePath({ group: '', version: 'v1', resource: 'pods' }, 'a/b')).toThrow(/namespace/);
  });
});

describe('query strings', () => {
  it('puts every list field in the list query and omits the empty ones', () => {
    expect(
      params(
        listQuery({
          resourceVersion: '42',
          resourceVersionMatch: 'NotOlderThan',
          limit: 500,
          continue: 'tok/en=',
          labelSelector: 'app=web',
          fieldSelector: 'spec.nodeName=n1',
          timeoutSeconds: 30,
          allowWatchBookmarks: true,
          sendInitialEvents: true,
        }),
      ),
    ).toEqual({
      resourceVersion: '42',
      resourceVersionMatch: 'NotOlderThan',
      limit: '500',
      continue: 'tok/en=',
      labelSelector: 'app=web',
      fieldSelector: 'spec.nodeName=n1',
      timeoutSeconds: '30',
    });
    expect(listQuery({ resourceVersion: '', limit: 0, continue: '' })).toBe('');
    expect(params(listQuery({ resourceVersion: '0' }))).toEqual({ resourceVersion: '0' });
  });

  it('always sends watch=true and the watch-only fields when given', () => {
    expect(params(watchQuery({}))).toEqual({ watch: 'true' });
    expect(
      params(
        watchQuery({
          resourceVersion: '7',
          resourceVersionMatch: 'NotOlderThan',
          allowWatchBookmarks: true,
          timeoutSeconds: 299.9,
          sendInitialEvents: true,
          limit: 10,
          continue: 'x',
        }),
      ),
    ).toEqual({
      watch: 'true',
      resourceVersion: '7',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '299',
      sendInitialEvents: 'true',
    });
    expect(params(watchQuery({ sendInitialEvents: false, allowWatchBookmarks: false }))).toEqual({
      watch: 'true',
      sendInitialEvents: 'false',
    });
  });

  it('ANDs the ListerWatcher selectors with the per-call ones', () => {
    const base = { labelSelector: 'tier=db', fieldSelector: 'metadata.name=x' };
    expect(params(listQuery({ labelSelector: 'app=web' }, base))).toEqual({
      labelSelector: 'tier=db,app=web',
      fieldSelector: 'metadata.name=x',
    });
    expect(combineSelectors(undefined, ' ')).toBeUndefined();
    expect(combineSelectors('a=1', undefined)).toBe('a=1');
  });
});
