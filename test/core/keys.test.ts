import { describe, expect, it } from 'vitest';
import {
  DeletedFinalStateUnknown,
  ErrorCodes,
  InvalidObjectError,
  PREVIEW_MAX_CHARS,
  deletionHandlingMetaNamespaceKeyFunc,
  groupOf,
  keyOf,
  metaNamespaceKeyFunc,
  namespacedKey,
  splitMetaNamespaceKey,
} from '../../src/core/index.js';

describe('metaNamespaceKeyFunc', () => {
  it('keys a namespaced object as namespace/name', () => {
    expect(metaNamespaceKeyFunc({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
  });

  it('keys a cluster-scoped object by its name alone', () => {
    expect(metaNamespaceKeyFunc({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(metaNamespaceKeyFunc({ metadata: { name: 'node-1', namespace: '' } })).toBe('node-1');
  });

  it('returns a string given as an explicit key unchanged', () => {
    expect(metaNamespaceKeyFunc('ns/explicit')).toBe('ns/explicit');
  });

  it('rejects an object without metadata with an INVALID_OBJECT error that previews the object', () => {
    let caught: unknown;
    try {
      metaNamespaceKeyFunc({ kind: 'Pod', spec: { nodeName: 'n1' } });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InvalidObjectError);
    expect((caught as InvalidObjectError).code).toBe(ErrorCodes.INVALID_OBJECT);
    expect((caught as Error).message).toContain('no metadata');
    expect((caught as Error).message).toContain('"nodeName":"n1"');
  });

  it('rejects an object whose metadata has no name, naming what is missing', () => {
    expect(() => metaNamespaceKeyFunc({ metadata: { namespace: 'ns' } })).toThrow(/no metadata\.name/);
    expect(() => metaNamespaceKeyFunc({ metadata: { name: '' } })).toThrow(/no metadata\.name/);
    expect(() => metaNamespaceKeyFunc({ metadata: { name: 42 } })).toThrow(/no metadata\.name/);
  });

  it('keeps the preview of a huge object short', () => {
    const huge = { metadata: { namespace: 'ns' }, data: 'x'.repeat(10_000_000) };
    let message = '';
    try {
      metaNamespaceKeyFunc(huge);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.length).toBeLessThan(PREVIEW_MAX_CHARS + 100);
    expect(message.endsWith('…')).toBe(true);
  });

  it('rejects null, numbers and arrays without crashing on them', () => {
    expect(() => metaNamespaceKeyFunc(null)).toThrow(InvalidObjectError);
    expect(() => metaNamespaceKeyFunc(7)).toThrow(InvalidObjectError);
    expect(() => metaNamespaceKeyFunc([])).toThrow(InvalidObjectError);
  });

  it('describes a circular object without throwing while building the message', () => {
    const obj: Record<string, unknown> = { metadata: {} };
    obj.self = obj;
    expect(() => metaNamespaceKeyFunc(obj)).toThrow(/\[Circular\]/);
  });
});

describe('deletionHandlingMetaNamespaceKeyFunc', () => {
  it('returns the key a tombstone carries rather than reading its object', () => {
    const tomb = new DeletedFinalStateUnknown('ns/gone', { metadata: { name: 'other', namespace: 'x' } });
    expect(deletionHandlingMetaNamespaceKeyFunc(tomb)).toBe('ns/gone');
  });

  it('keys a plain object like metaNamespaceKeyFunc', () => {
    expect(deletionHandlingMetaNamespaceKeyFunc({ metadata: { namespace: 'n', name: 'p' } })).toBe('n/p');
  });
});

describe('splitMetaNamespaceKey', () => {
  it('splits namespace/name', () => {
    expect(splitMetaNamespaceKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
  });

  it('reads a key without a slash as a cluster-scoped name', () => {
    expect(splitMetaNamespaceKey('a')).toEqual({ namespace: '', name: 'a' });
  });

  it('rejects a key with more than one slash with an INVALID_KEY error', () => {
    expect(() => splitMetaNamespaceKey('a/b/c')).toThrow(expect.objectContaining({ code: 'INVALID_KEY' }));
  });

  it('round-trips every key metaNamespaceKeyFunc makes', () => {
    for (const meta of [{ name: 'a' }, { name: 'b', namespace: 'ns' }]) {
      const { namespace, name } = splitMetaNamespaceKey(metaNamespaceKeyFunc({ metadata: meta }));
      expect(name).toBe(meta.name);
      expect(namespace).toBe(meta.namespace ?? '');
    }
  });
});

describe('the one key family', () => {
  it('namespacedKey builds namespace/name, or name alone when the namespace is empty or absent', () => {
    expect(namespacedKey('ns', 'a')).toBe('ns/a');
    expect(namespacedKey('', 'a')).toBe('a');
    expect(namespacedKey(undefined, 'a')).toBe('a');
    expect(namespacedKey(null, 'a')).toBe('a');
  });

  it('keyOf is the deletion-handling key, or undefined for an object without one (never throws)', () => {
    expect(keyOf({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
    expect(keyOf(new DeletedFinalStateUnknown('ns/gone', {}))).toBe('ns/gone');
    expect(keyOf({ metadata: {} })).toBeUndefined();
    expect(keyOf(null)).toBeUndefined();
  });

  it('groupOf reads the API group of an apiVersion (the core group is empty)', () => {
    expect(groupOf('apps/v1')).toBe('apps');
    expect(groupOf('v1')).toBe('');
    expect(groupOf('example.com/v1alpha1')).toBe('example.com');
  });
});
