// An update's unchanged parts, shared with the cached object it replaces.
//
// A watch event carries the whole object, and most of it is what the cache already holds: an
// annotation, a condition or the resource version changed, the spec, the containers, most of
// `managedFields` did not. Parsed, the event is a fresh copy of all of it. The cache keeps the copy
// until the next change, so the garbage collector copies it out of the young generation and later
// marks it in the old one, while the replaced object becomes old garbage — for every event. After
// `shareUnchanged(old, new)` each part of `new` that equals the same part of `old` is `old`'s: the
// fresh copies die young (which costs the collector nothing), and what the cache keeps per event is
// only what changed. The walk costs less than the collector's work it saves: on kube-apiserver under a
// writer, 15 % less CPU per event (bench/notes.md, issue 29, sixteenth session).

/**
 * Makes every part of `next` that is deep-equal to the same part of `prev` (same path, same JSON value)
 * `prev`'s, in place, and returns whether the two are deep-equal as a whole. `next` itself stays the
 * object it is. Values are JSON values (objects, arrays, strings, numbers, booleans, null), as decoded.
 *
 * An object that cannot be changed (frozen, sealed, or made non-extensible by whoever built it) keeps
 * its parts; an object with an own `__proto__` key (JSON can carry one) is never equal to another.
 *
 * Warning: afterwards `prev` and `next` share objects, so changing a part of one changes the other.
 * Objects from an informer's cache must not be changed anyway; sharing makes such a change reach further.
 */
export function shareUnchanged(prev: unknown, next: unknown): boolean {
  return share(prev, next, 0);
}

/**
 * How deep the walk goes. A part nested deeper counts as changed, and so do the parts that hold it:
 * nothing is shared there, and the walk cannot overflow the stack on an object nested thousands deep
 * (JSON.parse takes one, and a custom resource may be one).
 */
const MAX_DEPTH = 100;

function share(prev: unknown, next: unknown, depth: number): boolean {
  if (prev === next) return true;
  if (typeof next !== 'object' || next === null || typeof prev !== 'object' || prev === null || depth === MAX_DEPTH) return false;
  if (Array.isArray(next)) return Array.isArray(prev) && shareArray(prev as unknown[], next as unknown[], depth + 1);
  if (Array.isArray(prev)) return false;
  return shareRecord(prev as Record<string, unknown>, next as Record<string, unknown>, depth + 1);
}

function shareArray(prev: unknown[], next: unknown[], depth: number): boolean {
  const writable = Object.isExtensible(next);
  const common = Math.min(prev.length, next.length);
  let equal = prev.length === next.length;
  for (let i = 0; i < common; i++) {
    const p = prev[i];
    const n = next[i];
    if (p === n) continue;
    if (share(p, n, depth)) {
      if (writable) next[i] = p;
    } else equal = false;
  }
  return equal;
}

function shareRecord(prev: Record<string, unknown>, next: Record<string, unknown>, depth: number): boolean {
  const writable = Object.isExtensible(next);
  let equal = true;
  let keys = 0;
  for (const k in next) {
    keys++;
    const n = next[k];
    const p = prev[k];
    if (p === n) continue;
    // A key `prev` lacks reads as undefined, or as an inherited function: never equal to a JSON value.
    if (k !== '__proto__' && share(p, n, depth)) {
      if (writable) next[k] = p;
    } else equal = false;
  }
  if (!equal) return false;
  // Every key of `next` has its value in `prev`: equal when `prev` has no other.
  for (const k in prev) if (--keys < 0 || k === '__proto__') return false;
  return keys === 0;
}
