// Plain JSON values: the one plain-object test, the one deep equality, safe member reads and writes (own keys only), and RFC 6901 pointers.

import { ErrorCodes, KubeInformerError } from './errors.js';

/**
 * True for a plain object: not `null`, not an array, made by an object literal, `JSON.parse`,
 * `structuredClone` or `Object.create(null)` (its prototype is `null` or a realm's `Object.prototype`).
 * A `Date`, a `Buffer`, a `Map` or a class instance is not one. Every JSON object is.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * Deep equality of JSON values, by own enumerable keys only: two plain objects are equal when they
 * have the same keys (in any order) with equal values — whatever the keys are called, so members
 * named `constructor`, `toString`, `valueOf` or `__proto__` are compared like any other (where
 * `fast-deep-equal` throws or answers wrongly for them). Arrays are equal element by element. For
 * what a transform may put into a cached object: two byte arrays (`Buffer`, `Uint8Array`, any typed
 * array of the same type) byte by byte, two `Date`s by their time, two `Map`s by their keys (`===`)
 * and deeply equal values, two `Set`s by their members (`===`). Anything else — numbers, strings,
 * booleans, `null`, a class instance — only when it is the same value (`===`).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  // The common case first (objects of this realm): one prototype read each.
  if (Object.getPrototypeOf(a) === Object.prototype && Object.getPrototypeOf(b) === Object.prototype) {
    return sameMembers(a as Record<string, unknown>, b as Record<string, unknown>);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) return sameBytes(a, b);
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Map || b instanceof Map) return a instanceof Map && b instanceof Map && sameMap(a, b);
  if (a instanceof Set || b instanceof Set) return a instanceof Set && b instanceof Set && a.size === b.size && [...a].every((v) => b.has(v));
  return isObject(a) && isObject(b) && sameMembers(a, b);
}

function sameMembers(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !deepEqual(a[key], b[key])) return false;
  }
  return true;
}

function sameMap(a: Map<unknown, unknown>, b: Map<unknown, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k))) return false;
  return true;
}

function sameBytes(a: object, b: object): boolean {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Sets the own member `key` of `target` to `value`. Plain assignment would do for every key but
 * `__proto__`, where it changes the object's prototype (and drops the member) instead of writing
 * one: that key is defined as an own data property, as `JSON.parse` makes it.
 */
export function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** The own member `key` of `target`, or `undefined` when `target` has no such own member (an inherited one does not count). */
export function getMember(target: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/**
 * A string that is not a JSON Pointer (code `INVALID_JSON_POINTER`): it is neither `""` (the whole
 * document) nor starts with `/`, or it holds a `~` not followed by `0` or `1`. `pointer` is the string.
 */
export class JsonPointerError extends KubeInformerError {
  /** The string that failed to parse. */
  readonly pointer: string;
  constructor(pointer: string, message: string) {
    super(ErrorCodes.INVALID_JSON_POINTER, message);
    this.pointer = pointer;
  }
}

/**
 * The reference tokens of a JSON Pointer, unescaped (`~1` → `/`, `~0` → `~`): `"/a~1b/0"` gives
 * `["a/b", "0"]`, `""` gives `[]` (the whole document), `"/"` gives `[""]` (the member named by the
 * empty string). Throws a {@link JsonPointerError} for a string that is not a pointer.
 */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new JsonPointerError(pointer, `${JSON.stringify(pointer)} is not a JSON pointer: it must be empty or start with "/"`);
  }
  if (/~(?![01])/.test(pointer)) {
    throw new JsonPointerError(pointer, `${JSON.stringify(pointer)} is not a JSON pointer: "~" must be followed by "0" or "1"`);
  }
  return pointer.slice(1).split('/').map(unescapeJsonPointerToken);
}

/** One reference token escaped for a pointer (RFC 6901): `~` → `~0`, then `/` → `~1`. */
export function escapeJsonPointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** One escaped reference token read back: `~1` → `/`, then `~0` → `~` (in that order, so `~01` is `~1`). */
export function unescapeJsonPointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The JSON Pointer of `tokens` (each escaped): `["a/b", "0"]` gives `"/a~1b/0"`, `[]` gives `""`. */
export function formatJsonPointer(tokens: readonly string[]): string {
  let out = '';
  for (const token of tokens) out += `/${escapeJsonPointerToken(token)}`;
  return out;
}

/**
 * The array index a reference token names (RFC 6901: `0`, or digits without a leading zero), or
 * `undefined` for any other token (`-`, `01`, `-1`, `1e3`, ` 1`).
 */
export function arrayIndexOf(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const i = Number(token);
  return Number.isSafeInteger(i) ? i : undefined;
}
