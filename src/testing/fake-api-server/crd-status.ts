// A CustomResourceDefinition's status as kube-apiserver v1.37.2 writes it: empty on create, then NamesAccepted and Established.

import type { KubeObject, ObjectMeta } from '../../core/types.js';
import type { ResourceState, StoredEntry } from '../resource-state.js';
import { metaTime } from './finalizers.js';
import { recordUpdate } from './ownership.js';

interface CrdSpec {
  names?: Record<string, unknown>;
  versions?: Array<{ name?: unknown; storage?: unknown }>;
}

function specOf(crd: KubeObject): CrdSpec {
  const spec = (crd as { spec?: unknown }).spec;
  return spec !== null && typeof spec === 'object' ? spec : {};
}

/** The status kube-apiserver stores with a created CRD, whatever status was sent: no conditions yet, no accepted names. */
export function initialCrdStatus(crd: KubeObject): Record<string, unknown> {
  const versions = Array.isArray(specOf(crd).versions) ? (specOf(crd).versions ?? []) : [];
  const stored = versions.filter((v) => v?.storage === true && typeof v.name === 'string').map((v) => v.name as string);
  return { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: stored };
}

/**
 * What the apiextensions controllers of kube-apiserver do right after a CRD is created — here at once,
 * as one status write by `kube-apiserver` (a MODIFIED event): the names are accepted (kube-apiserver
 * would refuse names another CRD holds; the fake accepts them) and the CRD is `Established`.
 */
export function establish(state: ResourceState, stateKey: string, entry: StoredEntry, now: () => Date): StoredEntry {
  const crd = JSON.parse(entry.json) as KubeObject & { status?: Record<string, unknown> };
  const time = metaTime(now);
  const names = specOf(crd).names ?? {};
  const acceptedNames: Record<string, unknown> = {};
  for (const k of ['plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories']) if (names[k] !== undefined) acceptedNames[k] = names[k];
  const status = {
    ...(crd.status ?? initialCrdStatus(crd)),
    conditions: [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: time, reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: time, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ],
    acceptedNames,
  };
  const next: KubeObject = { ...crd, status } as KubeObject;
  const meta: ObjectMeta = { ...next.metadata };
  meta.managedFields = recordUpdate(crd, next, 'kube-apiserver', 'status', 'apiextensions.k8s.io/v1', now);
  return state.update(stateKey, { ...next, metadata: meta });
}
