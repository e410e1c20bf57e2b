// What kube-apiserver fills in, leaves out or does not write, modelled by the fake: empty metadata omitted, a namespace's defaults, the write that changes nothing.

import { deepEqual } from '../../core/index.js';
import type { KubeObject, ObjectMeta } from '../../core/types.js';
import type { StoredEntry } from '../resource-state.js';

/** The label kube-apiserver keeps on every namespace, equal to its name. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * `meta` without the empty `labels`, `annotations`, `finalizers` and `ownerReferences` that Go's
 * `omitempty` leaves out of every answer (an empty map or list is never stored), and — on a
 * namespace — with the `kubernetes.io/metadata.name` label set to its name, as kube-apiserver sets
 * it on every write.
 */
export function serverMetadata(stateKey: string, meta: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = { ...meta };
  if (stateKey === 'namespaces' && typeof out.name === 'string' && out.name !== '') {
    out.labels = { ...(out.labels ?? {}), [NAMESPACE_NAME_LABEL]: out.name };
  }
  for (const key of ['labels', 'annotations'] as const) {
    const v = out[key];
    if (v !== undefined && (v === null || Object.keys(v).length === 0)) delete out[key];
  }
  for (const key of ['finalizers', 'ownerReferences'] as const) {
    const v = out[key];
    if (v !== undefined && (v === null || v.length === 0)) delete out[key];
  }
  return out;
}

/**
 * A created namespace with kube-apiserver's defaults: `spec.finalizers: ['kubernetes']` and
 * `status.phase: 'Active'` (not recorded in managedFields, as on the real server). Other objects are
 * returned as they are.
 */
export function createDefaults(stateKey: string, obj: KubeObject): KubeObject {
  if (stateKey !== 'namespaces') return obj;
  const ns = obj as KubeObject & { spec?: { finalizers?: string[] }; status?: { phase?: string } };
  return {
    ...ns,
    spec: { ...(ns.spec ?? {}), finalizers: ns.spec?.finalizers ?? ['kubernetes'] },
    status: { ...(ns.status ?? {}), phase: ns.status?.phase ?? 'Active' },
  } as KubeObject;
}

/**
 * True when storing `next` over `prev` would change nothing but managedFields timestamps and order: kube-apiserver
 * then writes nothing — no new resourceVersion, no watch event — and answers the stored object.
 */
export function changesNothing(prev: StoredEntry, next: KubeObject): boolean {
  return deepEqual(comparable(JSON.parse(prev.json) as KubeObject), comparable(next));
}

function comparable(obj: KubeObject): unknown {
  const { resourceVersion: _rv, managedFields, ...meta } = obj.metadata ?? {};
  // Entries compare as a set: the fake moves a writer's entry to the end even when nothing changed.
  const fields = (managedFields ?? []).map(({ time: _t, ...entry }) => JSON.stringify(entry)).sort();
  return { ...obj, metadata: { ...meta, ...(fields.length > 0 ? { managedFields: fields } : {}) } };
}
