// The scale subresource of the built-in workloads on the fake API server (autoscaling/v1 Scale over spec.replicas).

import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../core/types.js';
import { statusError, type ResourceState } from '../resource-state.js';
import type { FakeApiVerb } from './faults.js';
import { parseJsonBody, sendJson } from './http-util.js';
import type { ObjectRequest } from './writes.js';

/** The resources (state keys) with a scale subresource: kube-apiserver's built-in workloads. */
const SCALABLE = new Set(['deployments.apps', 'replicasets.apps', 'statefulsets.apps', 'replicationcontrollers']);

interface Workload {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string; creationTimestamp?: string };
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> } | Record<string, string> };
  status?: { replicas?: number };
}

/** A label selector (a LabelSelector object, or a replication controller's plain map) in its string form. */
function selectorString(selector: unknown): string {
  if (selector === undefined) return '';
  const s = selector as { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
  if (s.matchLabels === undefined && s.matchExpressions === undefined) {
    return Object.entries(selector as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',');
  }
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

function scaleOf(obj: Workload): Record<string, unknown> {
  const m = obj.metadata ?? {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: { replicas: obj.status?.replicas ?? 0, selector: selectorString(obj.spec?.selector) },
  };
}

/**
 * GET and PUT of `<workload>/scale` for deployments, replicasets, statefulsets and replication
 * controllers: the Scale is read from and written to `spec.replicas`; a Scale with a stale
 * `metadata.resourceVersion` is 409 Conflict. Other resources (custom resources included — the fake
 * does not read a CRD's scale subresource) answer 404; a PATCH of a scale answers 501.
 */
export function serveScale(res: ServerResponse, state: ResourceState, r: ObjectRequest, verb: FakeApiVerb): void {
  if (!SCALABLE.has(r.ri.stateKey)) {
    throw statusError(404, 'NotFound', `the server could not find the requested resource (the fake serves the scale subresource of deployments, replicasets, statefulsets and replicationcontrollers only)`);
  }
  const entry = state.get(r.ri.stateKey, r.namespace, r.name ?? '');
  if (entry === undefined) throw statusError(404, 'NotFound', `${r.ri.resource}.${r.ri.group} "${r.name}" not found`, r.ri.stateKey, r.name);
  const obj = JSON.parse(entry.json) as Workload & KubeObject;
  if (verb === 'get') {
    sendJson(res, 200, JSON.stringify(scaleOf(obj)));
    return;
  }
  if (verb !== 'update') throw statusError(501, 'NotImplemented', `the fake API server does not implement ${verb} of the scale subresource (GET and PUT only)`);
  const body = parseJsonBody(r.body) as { metadata?: { resourceVersion?: string }; spec?: { replicas?: unknown } } | null;
  const replicas = body?.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw statusError(422, 'Invalid', `Scale.autoscaling "${r.name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`, r.ri.stateKey, r.name);
  }
  const next = { ...obj, spec: { ...(obj.spec ?? {}), replicas } } as KubeObject;
  const stored = state.update(r.ri.stateKey, next, { expectResourceVersion: body?.metadata?.resourceVersion, dryRun: r.dryRun });
  sendJson(res, 200, JSON.stringify(scaleOf(JSON.parse(stored.json) as Workload)));
}
