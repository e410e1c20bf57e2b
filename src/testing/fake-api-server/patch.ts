// PATCH bodies: JSON merge patch (RFC 7386) and JSON patch (RFC 6902), applied to plain JSON values.

import { applyJsonPatch, isObject, JsonPatchError, setMember, type JsonPatchOperation } from '../../core/index.js';
import { statusError } from '../resource-state.js';

/**
 * Applies an RFC 7386 merge patch: objects merge key by key (own keys; `__proto__` is a key like any
 * other), `null` removes a key, anything else (arrays included) replaces. Returns a new value;
 * `target` is not changed.
 */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setMember(out, k, applyMergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}

/**
 * Applies an RFC 6902 JSON patch with the core applier in kube-apiserver's dialect, answering as
 * kube-apiserver v1.37.2 does: 400 BadRequest for a body that is no list of objects (it does not
 * decode), 422 Invalid for everything the applier refuses (an unknown op, a missing path, an index
 * out of range, a failed test).
 */
function applyJsonPatchBody(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops) || !ops.every(isObject)) throw statusError(400, 'BadRequest', 'a JSON patch must be an array of operations (objects)');
  try {
    return applyJsonPatch(target, ops as unknown as readonly JsonPatchOperation[], { dialect: 'kube-apiserver' });
  } catch (err) {
    if (err instanceof JsonPatchError) throw statusError(422, 'Invalid', err.message);
    throw err;
  }
}

/** The PATCH media types the fake speaks (server-side apply is served apart). */
const PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json']);

/** 415 UnsupportedMediaType for a PATCH whose media type is no patch type: checked before the body is read, as kube-apiserver does. */
export function checkPatchType(contentType: string): void {
  if (!PATCH_TYPES.has(contentType.split(';')[0].trim().toLowerCase())) applyPatch({}, {}, contentType);
}

/** Applies a PATCH body of media type `contentType` to `current`; 415 for a type it does not speak. */
export function applyPatch(current: unknown, body: unknown, contentType: string): unknown {
  const type = contentType.split(';')[0].trim().toLowerCase();
  switch (type) {
    case 'application/merge-patch+json':
    case 'application/strategic-merge-patch+json': // approximated by a merge patch
      return applyMergePatch(current, body);
    case 'application/json-patch+json':
      return applyJsonPatchBody(current, body);
    default:
      throw statusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
}
