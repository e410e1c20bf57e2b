// The JSON Patch (RFC 6902) a mutating webhook sends back, computed from the object before and after the handler.
//
// Our own small diff rather than a library (fast-json-patch's `compare` is the usual choice): objects
// are diffed key by key (add / remove / recurse), and an array that changed is replaced whole. An
// element-wise array diff saves bytes but needs index bookkeeping that is easy to get wrong on
// removals; a replace of the array is always correct against the object the API server sent.

import isEqual from 'fast-deep-equal';

/** One RFC 6902 operation as the API server applies it (`add`, `remove`, `replace`). */
export type JsonPatchOperation = JsonPatchSet | JsonPatchRemove;

/** An `add` or `replace` operation. */
export interface JsonPatchSet {
  /** `'add'` (a new member) or `'replace'` (an existing value). */
  op: 'add' | 'replace';
  /** The JSON Pointer (RFC 6901) of the target. */
  path: string;
  /** The value set there. */
  value: unknown;
}

/** A `remove` operation. */
export interface JsonPatchRemove {
  /** `'remove'`. */
  op: 'remove';
  /** The JSON Pointer (RFC 6901) of the member removed. */
  path: string;
}

/** The operations that turn `before` into `after` (both plain JSON values); empty when they are equal. */
export function jsonPatchDiff(before: unknown, after: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diff(before, after, '', ops);
  return ops;
}

function diff(before: unknown, after: unknown, path: string, ops: JsonPatchOperation[]): void {
  if (isEqual(before, after)) return;
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (!(key in after) || after[key] === undefined) ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      if (value === undefined) continue;
      const child = `${path}/${escape(key)}`;
      if (!(key in before) || before[key] === undefined) ops.push({ op: 'add', path: child, value });
      else diff(before[key], value, child, ops);
    }
    return;
  }
  ops.push({ op: 'replace', path, value: after });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Applies `ops` to a deep copy of `doc` (for tests and for callers that want to preview a mutation). */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    if (op.path === '') {
      root = op.op === 'remove' ? undefined : structuredClone(op.value);
      continue;
    }
    const keys = op.path
      .slice(1)
      .split('/')
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent = root as Record<string, unknown>;
    for (const k of keys) parent = parent[k] as Record<string, unknown>;
    if (op.op === 'remove') delete parent[last];
    else parent[last] = structuredClone(op.value);
  }
  return root;
}
