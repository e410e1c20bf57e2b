// Server-side apply on the fake API server: create-if-absent, owned-field merge, removal, conflicts — the common subset, the rest 501.

import type { ServerResponse } from 'node:http';
import type { KubeObject, ObjectMeta } from '../../core/types.js';
import { formatFieldPath, type ManagedFieldsEntry } from '../../core/managed-fields.js';
import { isBuiltInGroup, MAX_FIELD_MANAGER_LENGTH } from '../../listwatch/index.js';
import { ApiStatusError } from '../../core/errors.js';
import { statusError, type ResourceState } from '../resource-state.js';
import { metaTime } from './finalizers.js';
import { normalizeObject } from './paths.js';
import { withGeneration } from './generation.js';
import { deepEqual, getMember, isObject, setMember } from '../../core/index.js';
import { entryWith, identityOf, leafPaths, overlaps, ownedPaths, pathKey, startingEntries, valueAt, type Path } from './ownership.js';
import { admitted, answer, keepServerFields, keepsStatusApart, storeWrite, withStatusOf, type ObjectRequest } from './writes.js';
import { admitCustomResource, checkApplyFields } from './custom-resources.js';
import { CRD_STATE_KEY, isBuiltInResource } from './registry.js';
import { establish, initialCrdStatus } from './crd-status.js';

/** True for the media type of a server-side apply patch. */
export function isApplyPatch(contentType: string): boolean {
  return contentType.split(';')[0].trim().toLowerCase() === 'application/apply-patch+yaml';
}

function notImplemented(message: string): ApiStatusError {
  return statusError(501, 'NotImplemented', `the fake API server does not implement this part of server-side apply: ${message}`);
}

/** Objects merge key by key; anything else (lists included: the fake treats them as atomic) replaces. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isObject(patch) || !isObject(target)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...target };
  for (const [k, v] of Object.entries(patch)) setMember(out, k, mergeInto(getMember(out, k), v));
  return out;
}

/**
 * Removes the field at `path` — unless it holds a non-empty map (fields below it are someone's: an
 * owned empty map is a leaf) — then every parent the removal left empty.
 */
function removeAt(obj: Record<string, unknown>, path: Path): void {
  const node = valueAt(obj, path);
  if (isObject(node) && Object.keys(node).length > 0) return;
  const parents: Array<Record<string, unknown>> = [obj];
  for (const step of path.slice(0, -1)) {
    const next = getMember(parents[parents.length - 1], step.slice(2));
    if (!isObject(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1][path[path.length - 1].slice(2)];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]).length > 0) break;
    delete parents[i - 1][path[i - 1].slice(2)];
  }
}

/** How a conflicting manager is named in the Status, as kube-apiserver prints it. */
function managerText(e: ManagedFieldsEntry): string {
  let text = JSON.stringify(e.manager ?? '');
  if (e.subresource) text += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') text += ` using ${e.apiVersion ?? ''}`;
  return text;
}

function conflictError(conflicts: Array<{ entry: ManagedFieldsEntry; path: Path }>): ApiStatusError {
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(managerText(c.entry), [...(byManager.get(managerText(c.entry)) ?? []), formatFieldPath(c.path)]);
  const parts = [...byManager].map(([m, fields]) => (fields.length === 1 ? `conflict with ${m}: ${fields[0]}` : `conflicts with ${m}:\n${fields.map((f) => `- ${f}`).join('\n')}`));
  const n = conflicts.length;
  const message = `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`;
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${managerText(c.entry)}`, field: formatFieldPath(c.path) }));
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Conflict', details: { causes }, code: 409 };
  return new ApiStatusError(409, message, { reason: 'Conflict', status });
}

function checkRequest(r: ObjectRequest): { config: KubeObject; manager: string } {
  const manager = r.fieldManager;
  if (manager === undefined || manager === '') {
    throw statusError(400, 'BadRequest', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  }
  if (Buffer.byteLength(manager) > MAX_FIELD_MANAGER_LENGTH) {
    throw statusError(422, 'Invalid', `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than ${MAX_FIELD_MANAGER_LENGTH} bytes`);
  }
  let config: unknown;
  try {
    config = JSON.parse(r.body);
  } catch {
    throw notImplemented('the body must be JSON (JSON is YAML; the fake does not parse other YAML)');
  }
  if (!isObject(config)) throw statusError(400, 'BadRequest', 'an apply patch must be an object');
  const c = config as KubeObject;
  if (c.apiVersion !== r.ri.apiVersion || c.kind !== r.ri.kind) {
    throw statusError(400, 'BadRequest', `the apply configuration is a ${String(c.kind)} (${String(c.apiVersion)}), the request addresses ${r.ri.kind} (${r.ri.apiVersion})`);
  }
  if (c.metadata?.name !== r.name) {
    throw statusError(400, 'BadRequest', `the name of the object (${String(c.metadata?.name)}) does not match the name on the URL (${String(r.name)})`);
  }
  const ns = c.metadata?.namespace;
  if (r.ri.namespaced && typeof ns === 'string' && ns !== '' && ns !== r.namespace) {
    throw statusError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  }
  return { config: c, manager };
}

/** A list whose elements kube-apiserver merges one by one (its schema's list type); the fake treats lists as atomic. */
function isGranularList(r: ObjectRequest, path: Path, value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  const key = pathKey(path);
  return key === 'f:metadata/f:finalizers' || key === 'f:metadata/f:ownerReferences' || isBuiltInGroup(r.ri.group);
}

/**
 * PATCH with `application/apply-patch+yaml`: server-side apply of the body by `fieldManager`. Creates
 * the object when absent (201); sets the fields the configuration names and makes the manager own
 * them (its `Apply` entry in `managedFields`); removes fields the manager applied before and no
 * longer names, unless another manager owns them; answers 409 Conflict with one
 * `FieldManagerConflict` cause per field another manager owns with another value, unless
 * `force=true` takes them. On the status subresource only `status` is applied; `status` in an apply of
 * the main resource is dropped when the resource has a status subresource (kube-apiserver's rule).
 * Not modelled (501): bodies that are not JSON, `status` in a main-resource apply of a built-in kind
 * (its status strategy is not modelled), and a list kube-apiserver merges per element (metadata
 * finalizers and owner references, lists of built-in types) that another manager also owns.
 */
export function serveApply(res: ServerResponse, state: ResourceState, r: ObjectRequest): void {
  const checked = checkRequest(r);
  checkApplyFields(r.cr, r.ri.version, checked.config);
  const manager = checked.manager;
  let config = checked.config;
  const sub = r.subresource === 'status' ? 'status' : undefined;
  if (sub === undefined && Object.hasOwn(config, 'status')) {
    // kube-apiserver resets (and owns nothing of) a status sent to the main resource when it has a status subresource.
    if (keepsStatusApart(r.ri)) config = withStatusOf(undefined, config);
    else if (isBuiltInResource(r.ri)) throw notImplemented('status in an apply of the main resource of a built-in kind; apply status through the status subresource (applyStatus)');
  }
  const prevEntry = state.get(r.ri.stateKey, r.namespace, r.name ?? '');
  if (prevEntry === undefined && sub !== undefined) {
    throw statusError(404, 'NotFound', `${r.ri.resource} "${r.name}" not found`, r.ri.stateKey, r.name);
  }
  const live = prevEntry === undefined ? undefined : (JSON.parse(prevEntry.json) as KubeObject);
  const applied = leafPaths(config, sub);
  const appliedKeys = new Set(applied.map(pathKey));
  const me: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion: config.apiVersion, time: metaTime(r.now), ...(sub ? { subresource: sub } : {}) };
  const myId = identityOf(me);
  const entries = startingEntries(live, r.ri.apiVersion, r.now);
  const mine = entries.find((e) => identityOf(e) === myId);
  const others = entries.filter((e) => identityOf(e) !== myId);

  const conflicts: Array<{ entry: ManagedFieldsEntry; path: Path }> = [];
  const taken = new Map<ManagedFieldsEntry, Set<string>>();
  for (const e of others) {
    for (const q of ownedPaths(e)) {
      for (const p of applied) {
        // As structured-merge-diff: a conflict is a field in both sets (the same path) whose value changes.
        if (pathKey(p) !== pathKey(q)) continue;
        if (isGranularList(r, p, valueAt(config, p))) throw notImplemented(`the list ${formatFieldPath(p)} is merged per element by kube-apiserver and is also owned by ${managerText(e)}`);
        if (deepEqual(valueAt(config, p), valueAt(live, p))) continue;
        conflicts.push({ entry: e, path: p });
        taken.set(e, (taken.get(e) ?? new Set()).add(pathKey(q)));
      }
    }
  }
  const unique = [...new Map(conflicts.map((c) => [`${identityOf(c.entry)}|${pathKey(c.path)}`, c])).values()];
  if (unique.length > 0 && !r.force) throw conflictError(unique);

  const kept = others
    .map((e) => entryWith(e, ownedPaths(e).filter((q) => !taken.get(e)?.has(pathKey(q)))))
    .filter((e) => Object.keys(e.fieldsV1 ?? {}).length > 0);
  const base = structuredClone(live ?? {}) as Record<string, unknown>;
  const merged = (sub === undefined ? mergeInto(base, config) : { ...base, status: mergeInto(base.status, (config as { status?: unknown }).status) }) as Record<string, unknown>;
  for (const p of mine === undefined ? [] : ownedPaths(mine)) {
    if (appliedKeys.has(pathKey(p)) || kept.some((e) => ownedPaths(e).some((q) => overlaps(p, q)))) continue;
    removeAt(merged, p);
  }
  const managedFields = [...kept, ...(applied.length > 0 ? [entryWith(me, applied)] : [])];
  const meta: ObjectMeta = { ...(merged.metadata as ObjectMeta | undefined), name: r.name, managedFields: managedFields };
  if (r.ri.namespaced) meta.namespace = r.namespace;
  const next = { ...merged, metadata: meta } as KubeObject;
  if (prevEntry === undefined) {
    const crd = r.ri.stateKey === CRD_STATE_KEY;
    const normalized = normalizeObject(r.ri, crd ? ({ ...next, status: initialCrdStatus(next) } as KubeObject) : next, r.namespace || 'default', r.now);
    const created = withGeneration(r.ri, undefined, admitCustomResource(r.cr, normalized, undefined));
    const entry = state.create(r.ri.stateKey, created, { dryRun: r.dryRun });
    answer(res, 201, entry, r.metadataOnly);
    if (crd && !r.dryRun) establish(state, r.ri.stateKey, entry, r.now);
    return;
  }
  answer(res, 200, storeWrite(state, r, prevEntry, admitted(r, prevEntry, normalizeObject(r.ri, keepServerFields(next, prevEntry), r.namespace, r.now)), undefined), r.metadataOnly);
}
