// The metadata of an object (the root or an x-kubernetes-embedded-resource) as kube-apiserver stores it: read into ObjectMeta and written back.

import { getMember, isObject } from '../core/index.js';

/** How each ObjectMeta field is read: a value of another shape is dropped, as the server drops a malformed field. */
const FIELDS: Readonly<Record<string, (v: unknown) => boolean>> = {
  name: isString,
  generateName: isString,
  namespace: isString,
  selfLink: isString,
  uid: isString,
  resourceVersion: isString,
  generation: Number.isInteger,
  creationTimestamp: isString,
  deletionTimestamp: isString,
  deletionGracePeriodSeconds: Number.isInteger,
  labels: isStringMap,
  annotations: isStringMap,
  ownerReferences: isObjectList,
  finalizers: (v) => Array.isArray(v) && v.every(isString),
  managedFields: isObjectList,
};

function isString(v: unknown): boolean {
  return typeof v === 'string';
}

function isStringMap(v: unknown): boolean {
  return isObject(v) && Object.values(v).every(isString);
}

function isObjectList(v: unknown): boolean {
  return Array.isArray(v) && v.every(isObject);
}

/** The ObjectMeta fields that are pointers in Go (`*int64`, `*Time`): `omitempty` keeps their zero value. */
const POINTERS: ReadonlySet<string> = new Set(['deletionGracePeriodSeconds', 'deletionTimestamp']);

/** Go's `omitempty`: what writing ObjectMeta back leaves out (a pointer field only when absent). */
function empty(key: string, v: unknown): boolean {
  if (v === null) return true;
  if (POINTERS.has(key)) return false;
  if (v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/**
 * `metadata` as the server keeps it (apiextensions' `objectmeta.Coerce`: the value is read into
 * ObjectMeta and written back): fields ObjectMeta does not have are dropped, a field of the wrong shape
 * is dropped, empty values are left out. A `metadata` that is not an object is returned as it is (the
 * server then refuses it). Returns a copy.
 */
export function coerceObjectMeta(metadata: unknown): unknown {
  if (!isObject(metadata)) return metadata;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const shape = getMember(FIELDS, key) as ((v: unknown) => boolean) | undefined;
    if (shape === undefined || empty(key, value) || !shape(value)) continue;
    out[key] = structuredClone(value);
  }
  return out;
}
