// PATCH bodies: JSON merge patch (RFC 7386) and JSON patch (RFC 6902), applied to plain JSON values.

import { statusError } from '../resource-state.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Applies an RFC 7386 merge patch: objects merge key by key, `null` removes a key, anything else
 * (arrays included) replaces. Returns a new value; `target` is not changed.
 */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function invalid(message: string): Error {
  return statusError(422, 'Invalid', message);
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw invalid(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: unknown, tokens: string[], pointer: string): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw invalid(`the path ${JSON.stringify(pointer)} does not exist`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw invalid(`the path ${JSON.stringify(pointer)} does not exist`);
  return { parent: cur, key: tokens[tokens.length - 1] };
}

/** True when `pointer`'s parent exists and lacks the last member (a missing intermediate is not). */
function isMissingMember(doc: unknown, pointer: string): boolean {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return false;
  const { parent, key } = parentOf(doc, tokens, pointer);
  return Array.isArray(parent) ? !(Number(key) < parent.length) : !Object.hasOwn(parent, key);
}

function getAt(doc: unknown, pointer: string): unknown {
  let cur: unknown = doc;
  for (const t of parsePointer(pointer)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = Object.hasOwn(cur, t) ? cur[t] : undefined;
    else cur = undefined;
    if (cur === undefined) throw invalid(`the path ${JSON.stringify(pointer)} does not exist`);
  }
  return cur;
}

function removeAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw invalid('cannot remove the whole document');
  const { parent, key } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length) throw invalid(`index out of range at ${pointer}`);
    return parent.splice(i, 1)[0];
  }
  if (!Object.hasOwn(parent, key)) throw invalid(`the path ${JSON.stringify(pointer)} does not exist`);
  const old = parent[key];
  delete parent[key];
  return old;
}

function addAt(doc: unknown, pointer: string, value: unknown, replace: boolean): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, key } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (replace && i >= parent.length)) {
      throw invalid(`index out of range at ${pointer}`);
    }
    parent.splice(i, replace ? 1 : 0, structuredClone(value));
  } else {
    if (replace && !Object.hasOwn(parent, key)) throw invalid(`the path ${JSON.stringify(pointer)} does not exist`);
    parent[key] = structuredClone(value);
  }
  return doc;
}

/** Applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test). Returns a new document. */
function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw statusError(400, 'BadRequest', 'a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of ops) {
    const op = raw as { op?: string; path?: string; from?: string; value?: unknown };
    const path = String(op.path ?? '');
    switch (op.op) {
      case 'add':
        doc = addAt(doc, path, op.value, false);
        break;
      case 'replace':
        doc = addAt(doc, path, op.value, true);
        break;
      case 'remove':
        removeAt(doc, path);
        break;
      case 'move': {
        const v = removeAt(doc, String(op.from ?? ''));
        doc = addAt(doc, path, v, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, getAt(doc, String(op.from ?? '')), false);
        break;
      case 'test':
        // As kube-apiserver (evanphx/json-patch): a missing member tests equal to null, so
        // `{ op: 'test', path: '/metadata/finalizers', value: null }` guards "no finalizers yet".
        if (op.value === null && isMissingMember(doc, path)) break;
        if (JSON.stringify(getAt(doc, path)) !== JSON.stringify(op.value)) {
          throw invalid(`test operation failed at ${path}`);
        }
        break;
      default:
        throw statusError(400, 'BadRequest', `unknown JSON patch operation: ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
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
      return applyJsonPatch(current, body);
    default:
      throw statusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
}
