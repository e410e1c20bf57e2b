// GET one object and the write verbs (POST, PUT, PATCH, DELETE) of the fake API server.

import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { KubeObject, ObjectMeta } from '../../core/types.js';
import { statusError, type ResourceState, type StoredEntry } from '../resource-state.js';
import { parseJsonBody, partialContentType, sendJson } from './http-util.js';
import { normalizeObject, type ResourceInfo } from './paths.js';
import { withGeneration } from './generation.js';
import { applyPatch, checkPatchType } from './patch.js';
import { applyDeletionRules, deleteOrMark } from './finalizers.js';
import { recordUpdate } from './ownership.js';
import { CRD_STATE_KEY, isBuiltInResource } from './registry.js';
import { establish, initialCrdStatus } from './crd-status.js';
import { checkStrategicPatch } from './not-modelled.js';
import { changesNothing, createDefaults } from './defaults.js';
import { admitCustomResource, type CustomResourceVersion } from './custom-resources.js';

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
  /** The CRD version a custom resource is served from (its schema, field labels); undefined for other resources. */
  cr?: CustomResourceVersion;
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
    sendJson(res, code, body, { 'Content-Type': partialContentType() });
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

/**
 * Whether a write of the main resource leaves `status` alone, as kube-apiserver's strategies do for a
 * resource with a status subresource: custom and declared resources with one, and CRDs themselves.
 * (The status strategies of the other built-in kinds are not modelled: see docs/testing.md.)
 */
export function keepsStatusApart(ri: ResourceInfo): boolean {
  return ri.statusSubresource && (!isBuiltInResource(ri) || ri.stateKey === CRD_STATE_KEY);
}

/** `next` with the status of `prev` (none when `prev` had none): a main-resource write cannot change it. */
export function withStatusOf(prev: KubeObject | undefined, next: KubeObject): KubeObject {
  const { status: _dropped, ...rest } = next as KubeObject & { status?: unknown };
  const status = (prev as { status?: unknown } | undefined)?.status;
  return (status === undefined ? rest : { ...rest, status }) as KubeObject;
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
  let body: KubeObject = { ...obj, metadata: meta };
  if (keepsStatusApart(r.ri)) body = withStatusOf(r.ri.stateKey === CRD_STATE_KEY ? ({ status: initialCrdStatus(obj) } as KubeObject) : undefined, body);
  const schemaChecked = admitCustomResource(r.cr, normalizeObject(r.ri, body, r.namespace || 'default', r.now), undefined);
  const normalized = tracked(r, undefined, withGeneration(r.ri, undefined, schemaChecked));
  const created = state.create(r.ri.stateKey, createDefaults(r.ri.stateKey, normalized), { dryRun: r.dryRun });
  answer(res, 201, created, r.metadataOnly);
  if (r.ri.stateKey === CRD_STATE_KEY && !r.dryRun) establish(state, r.ri.stateKey, created, r.now);
}

/**
 * PUT: replaces the object (or only its `status` on the status subresource). 409 Conflict when the
 * body's `metadata.resourceVersion` is stale; 422 when a custom resource's body has none (kube-apiserver
 * allows unconditional updates of built-in kinds only); 404 when the object is missing; 400 on a name mismatch.
 */
export function serveUpdate(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  const obj = bodyObject(r);
  checkNamespace(r, obj);
  if (obj.metadata?.name !== undefined && obj.metadata.name !== r.name) {
    throw statusError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
  }
  const prev = existing(state, r);
  const expectRv = obj.metadata?.resourceVersion;
  if ((expectRv === undefined || expectRv === '') && !isBuiltInResource(r.ri)) {
    // kube-apiserver's custom resource strategy does not allow an unconditional update.
    throw statusError(422, 'Invalid', `${r.ri.stateKey} "${prev.name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`, r.ri.stateKey, prev.name);
  }
  let next: KubeObject;
  if (r.subresource === 'status') {
    next = { ...(JSON.parse(prev.json) as KubeObject), status: (obj as { status?: unknown }).status } as KubeObject;
  } else {
    next = keepServerFields({ ...obj, metadata: { ...(obj.metadata ?? {}), name: r.name } }, prev);
    if (keepsStatusApart(r.ri)) next = withStatusOf(JSON.parse(prev.json) as KubeObject, next);
  }
  answer(res, 200, storeWrite(state, r, prev, tracked(r, prev, admitted(r, prev, normalizeObject(r.ri, next, r.namespace, r.now))), expectRv), r.metadataOnly);
}

/** `next` pruned, defaulted and validated when it is a custom resource (see {@link admitCustomResource}): the whole object, or its status on `/status`. */
export function admitted(r: ObjectRequest, prev: StoredEntry, next: KubeObject): KubeObject {
  if (r.cr === undefined) return next;
  return admitCustomResource(r.cr, next, JSON.parse(prev.json) as KubeObject, r.subresource === 'status' ? 'status' : 'object');
}

/**
 * Stores an update under the deletion rules; a write that changes nothing (but `resourceVersion` and
 * `managedFields`) stores nothing and answers the stored object, as kube-apiserver does. A write that removed the last finalizer of an object
 * being deleted deletes it, and is answered as kube-apiserver answers it (`Store.Update` →
 * `deleteWithoutFinalizers`): the object as written, at the resourceVersion it was read at — only the
 * DELETED event carries the deletion's new version.
 */
export function storeWrite(state: ResourceState, r: ObjectRequest, prev: StoredEntry, next: KubeObject, expectRv: string | undefined): StoredEntry {
  const ruled = applyDeletionRules(prev, withGeneration(r.ri, JSON.parse(prev.json) as KubeObject, next), r.ri.resource);
  if (ruled !== 'delete') {
    // As kube-apiserver (GuaranteedUpdate): a write that changes nothing stores nothing — same resourceVersion, no event — once its precondition holds.
    if ((expectRv === undefined || expectRv === '' || expectRv === prev.meta.resourceVersion) && changesNothing(prev, ruled)) return prev;
    return state.update(r.ri.stateKey, ruled, { expectResourceVersion: expectRv, dryRun: r.dryRun });
  }
  const { finalizers: _gone, ...rest } = next.metadata ?? {};
  const written: KubeObject = { ...next, metadata: { ...rest, resourceVersion: prev.meta.resourceVersion } };
  state.delete(r.ri.stateKey, prev.namespace, prev.name, { expectResourceVersion: expectRv, finalState: written, dryRun: r.dryRun });
  return { ...prev, json: JSON.stringify(written), meta: written.metadata ?? {} };
}

/**
 * PATCH with `application/merge-patch+json` (RFC 7386), `application/json-patch+json` (RFC 6902), or
 * `application/strategic-merge-patch+json` on a built-in resource (applied as a merge patch when it has
 * no list and no `$` directive, else 501; 415 on a custom resource, as on kube-apiserver). A patch that sets
 * `metadata.resourceVersion` is a precondition: 409 Conflict when it is stale.
 */
export function servePatch(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  checkPatchType(r.contentType);
  const body = parseJsonBody(r.body);
  if (r.contentType.split(';')[0].trim().toLowerCase() === 'application/strategic-merge-patch+json') {
    if (!isBuiltInResource(r.ri)) {
      // As kube-apiserver: custom resources have no Go types, so no patch strategies.
      throw statusError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    }
    checkStrategicPatch(body);
  }
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
  else if (keepsStatusApart(r.ri)) next = withStatusOf(current, next);
  if (r.ri.namespaced) next.metadata = { ...next.metadata, namespace: prev.namespace };
  answer(res, 200, storeWrite(state, r, prev, tracked(r, prev, admitted(r, prev, normalizeObject(r.ri, next, r.namespace, r.now))), expectRv), r.metadataOnly);
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
