// GET one object and the write verbs (POST, PUT, PATCH, DELETE) of the fake API server.

import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { KubeObject, ObjectMeta } from '../../core/types.js';
import { statusError, type ResourceState, type StoredEntry } from '../resource-state.js';
import { parseJsonBody, partialContentType, sendJson } from './http-util.js';
import { normalizeObject, withGeneration, type ResourceInfo } from './paths.js';
import { applyPatch, checkPatchType } from './patch.js';
import { applyDeletionRules, deleteOrMark } from './finalizers.js';
import { recordUpdate } from './ownership.js';
import { changesNothing, createDefaults } from './defaults.js';

/** What a single-object request addresses. */
export interface ObjectRequest {
  /** The resource. */
  ri: ResourceInfo;
  /** Namespace from the path (`''` for cluster-scoped). */
  namespace: string;
  /** Name from the path (absent for POST). */
  name?: string;
  /** `status` for the status subresource. */
  subresource?: string;
  /** The request body text. */
  body: string;
  /** The request Content-Type. */
  contentType: string;
  /** The client asked for PartialObjectMetadata. */
  metadataOnly: boolean;
  /** The server's "now", for creationTimestamp. */
  now: () => Date;
  /** `dryRun=All`: check and answer, change nothing. */
  dryRun: boolean;
  /** The `fieldManager` query parameter, when given. */
  fieldManager?: string;
  /** The `force` query parameter of an apply. */
  force: boolean;
}

function existing(state: ResourceState, r: ObjectRequest): StoredEntry {
  const entry = state.get(r.ri.stateKey, r.namespace, r.name ?? '');
  if (entry === undefined) {
    throw statusError(404, 'NotFound', `${r.ri.resource}${r.ri.group ? `.${r.ri.group}` : ''} "${r.name}" not found`, r.ri.stateKey, r.name);
  }
  return entry;
}

/** Sends a stored object (or its PartialObjectMetadata) with `code`. */
export function answer(res: ServerResponse, code: number, entry: StoredEntry, metadataOnly: boolean): void {
  if (metadataOnly) {
    const body = `{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":${JSON.stringify(entry.meta)}}`;
    sendJson(res, code, body, { 'Content-Type': partialContentType(false) });
  } else sendJson(res, code, entry.json);
}

function bodyObject(r: ObjectRequest): KubeObject {
  const body = parseJsonBody(r.body);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw statusError(400, 'BadRequest', 'the request body must be a JSON object');
  }
  return body;
}

function checkNamespace(r: ObjectRequest, obj: KubeObject): void {
  const ns = obj.metadata?.namespace;
  if (r.ri.namespaced && typeof ns === 'string' && ns !== '' && ns !== r.namespace) {
    throw statusError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** Keeps the fields the server owns (uid, creationTimestamp) from the stored version. */
export function keepServerFields(obj: KubeObject, prev: StoredEntry): KubeObject {
  const meta: ObjectMeta = { ...(obj.metadata ?? {}) };
  meta.uid = prev.meta.uid;
  if (prev.meta.creationTimestamp !== undefined) meta.creationTimestamp = prev.meta.creationTimestamp;
  return { ...obj, metadata: meta };
}

/**
 * `next` with its managedFields updated for a create, update or patch (operation `Update`) by the
 * request's field manager (`unknown` when the request names none).
 */
function tracked(r: ObjectRequest, prev: StoredEntry | undefined, next: KubeObject): KubeObject {
  const before = prev === undefined ? undefined : (JSON.parse(prev.json) as KubeObject);
  const managedFields = recordUpdate(before, next, r.fieldManager ?? 'unknown', r.subresource, r.ri.apiVersion, r.now);
  const meta: ObjectMeta = { ...(next.metadata ?? {}) };
  if (managedFields.length > 0) meta.managedFields = managedFields;
  else delete meta.managedFields;
  return { ...next, metadata: meta };
}

/** GET of one object: 200 with it, or 404. */
export function serveGet(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  answer(res, 200, existing(state, r), r.metadataOnly);
}

/** POST: 201 with the created object; 409 AlreadyExists; `generateName` honoured. */
export function serveCreate(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  const obj = bodyObject(r);
  checkNamespace(r, obj);
  const meta: ObjectMeta = { ...(obj.metadata ?? {}) };
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string') {
    meta.name = meta.generateName + randomBytes(4).toString('hex').slice(0, 5);
  }
  delete meta.resourceVersion;
  delete meta.deletionTimestamp; // the server's alone: kube-apiserver clears both on create
  delete meta.deletionGracePeriodSeconds;
  if (r.namespace !== '') meta.namespace = r.namespace;
  const normalized = tracked(r, undefined, withGeneration(r.ri, undefined, normalizeObject(r.ri, { ...obj, metadata: meta }, r.namespace || 'default', r.now)));
  const defaulted = createDefaults(r.ri.stateKey, normalized);
  answer(res, 201, state.create(r.ri.stateKey, defaulted, { dryRun: r.dryRun }), r.metadataOnly);
}

/**
 * PUT: replaces the object (or only its `status` on the status subresource). 409 Conflict when the
 * body's `metadata.resourceVersion` is stale; 404 when the object is missing; 400 on a name mismatch.
 */
export function serveUpdate(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  const obj = bodyObject(r);
  checkNamespace(r, obj);
  if (obj.metadata?.name !== undefined && obj.metadata.name !== r.name) {
    throw statusError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
  }
  const prev = existing(state, r);
  const expectRv = obj.metadata?.resourceVersion;
  let next: KubeObject;
  if (r.subresource === 'status') {
    next = { ...(JSON.parse(prev.json) as KubeObject), status: (obj as { status?: unknown }).status } as KubeObject;
  } else {
    next = keepServerFields({ ...obj, metadata: { ...(obj.metadata ?? {}), name: r.name } }, prev);
  }
  answer(res, 200, storeWrite(state, r, prev, tracked(r, prev, normalizeObject(r.ri, next, r.namespace, r.now)), expectRv), r.metadataOnly);
}

/**
 * Stores an update under the deletion rules. A write that removed the last finalizer of an object
 * being deleted deletes it, and is answered as kube-apiserver answers it (`Store.Update` →
 * `deleteWithoutFinalizers`): the object as written, at the resourceVersion it was read at — only the
 * DELETED event carries the deletion's new version.
 */
export function storeWrite(state: ResourceState, r: ObjectRequest, prev: StoredEntry, next: KubeObject, expectRv: string | undefined): StoredEntry {
  const ruled = applyDeletionRules(prev, withGeneration(r.ri, JSON.parse(prev.json) as KubeObject, next), r.ri.resource);
  if (ruled !== 'delete') {
    // A write that changes nothing is not stored (kube-apiserver's no-op update), once its precondition holds.
    if ((expectRv === undefined || expectRv === prev.meta.resourceVersion) && changesNothing(prev, ruled)) return prev;
    return state.update(r.ri.stateKey, ruled, { expectResourceVersion: expectRv, dryRun: r.dryRun });
  }
  const { finalizers: _gone, ...rest } = next.metadata ?? {};
  const written: KubeObject = { ...next, metadata: { ...rest, resourceVersion: prev.meta.resourceVersion } };
  state.delete(r.ri.stateKey, prev.namespace, prev.name, { expectResourceVersion: expectRv, finalState: written, dryRun: r.dryRun });
  return { ...prev, json: JSON.stringify(written), meta: written.metadata ?? {} };
}

/**
 * PATCH with `application/merge-patch+json` (RFC 7386), `application/json-patch+json` (RFC 6902), or
 * `application/strategic-merge-patch+json` (approximated by a merge patch). A patch that sets
 * `metadata.resourceVersion` is a precondition: 409 Conflict when it is stale.
 */
export function servePatch(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  checkPatchType(r.contentType);
  const body = parseJsonBody(r.body);
  const prev = existing(state, r);
  const current = JSON.parse(prev.json) as KubeObject;
  const patched = applyPatch(current, body, r.contentType) as KubeObject;
  if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) {
    throw statusError(422, 'Invalid', 'the patched object is not a JSON object');
  }
  const patchedRv = patched.metadata?.resourceVersion;
  const expectRv = patchedRv !== undefined && patchedRv !== prev.meta.resourceVersion ? patchedRv : undefined;
  let next = keepServerFields({ ...patched, metadata: { ...(patched.metadata ?? {}), name: prev.name } }, prev);
  if (r.subresource === 'status') next = { ...current, status: (patched as { status?: unknown }).status } as KubeObject;
  if (r.ri.namespaced) next.metadata = { ...next.metadata, namespace: prev.namespace };
  answer(res, 200, storeWrite(state, r, prev, tracked(r, prev, normalizeObject(r.ri, next, r.namespace, r.now)), expectRv), r.metadataOnly);
}

/**
 * The resources whose DELETE answers the deleted object itself (kube-apiserver's registries with
 * `ReturnDeletedObject`: pods, service accounts); every other resource answers a `Status`.
 */
const RETURNS_DELETED_OBJECT = new Set(['pods', 'serviceaccounts']);

/**
 * DELETE: 404 when missing; DeleteOptions preconditions → 409. An object with finalizers is only
 * marked (`deletionTimestamp`) and answered as it now is. An object deleted at once is answered as
 * kube-apiserver v1.37.2 answers it (`Store.finalizeDelete`): a `Status` with `status: Success` and
 * `details` {name, group, kind (the plural resource), uid}, or the final state for pods.
 */
export function serveDelete(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  let preconditions: { resourceVersion?: string; uid?: string } = {};
  if (r.body.trim() !== '') {
    const opts = parseJsonBody(r.body) as { preconditions?: { resourceVersion?: string; uid?: string } } | null;
    preconditions = opts?.preconditions ?? {};
  }
  const held = (existing(state, r).meta.finalizers?.length ?? 0) > 0;
  const entry = deleteOrMark(state, r.ri.stateKey, r.namespace, r.name ?? '', r.now, {
    expectResourceVersion: preconditions.resourceVersion,
    expectUid: preconditions.uid,
    dryRun: r.dryRun,
  });
  if (held || RETURNS_DELETED_OBJECT.has(r.ri.stateKey)) {
    answer(res, 200, entry, r.metadataOnly);
    return;
  }
  const details = { name: entry.name, ...(r.ri.group !== '' ? { group: r.ri.group } : {}), kind: r.ri.resource, uid: entry.meta.uid };
  sendJson(res, 200, JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }));
}
