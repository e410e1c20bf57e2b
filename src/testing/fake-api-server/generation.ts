// metadata.generation as kube-apiserver v1.37.2 keeps it: per resource, what a generation counts changes of.

import { deepEqual } from '../../core/index.js';
import type { KubeObject } from '../../core/types.js';
import type { ResourceInfo } from './paths.js';
import { isBuiltInResource } from './registry.js';

/**
 * What a generation counts changes of. A custom or declared resource: everything but `metadata` (and
 * `status` when it has its own subresource). A built-in kind, as its kube-apiserver v1.37.2 strategy:
 * its `spec` — and a Deployment's annotations too, and an EndpointSlice's everything but metadata, and
 * its labels.
 */
function counted(ri: ResourceInfo, obj: KubeObject): unknown {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj as KubeObject & Record<string, unknown>;
  if (!isBuiltInResource(ri)) {
    if (ri.statusSubresource) delete rest.status;
    return rest;
  }
  if (ri.stateKey === 'endpointslices.discovery.k8s.io') return { rest, labels: metadata?.labels ?? {} };
  if (ri.stateKey === 'deployments.apps') return { spec: rest.spec, annotations: metadata?.annotations ?? {} };
  return rest.spec;
}

/**
 * Sets `metadata.generation` of `next` when the resource keeps one: 1 when created (`prev` undefined),
 * else the stored generation, one more when what the generation counts changed (see {@link counted}).
 * An update of another built-in kind keeps the stored generation (kube-apiserver's `BeforeUpdate`); a
 * create keeps what was sent. Objects of other declared resources are returned as they are.
 */
export function withGeneration(ri: ResourceInfo, prev: KubeObject | undefined, next: KubeObject): KubeObject {
  if (!ri.generation) {
    if (prev === undefined || !isBuiltInResource(ri)) return next;
    const { generation: _sent, ...meta } = next.metadata ?? {};
    const kept = prev.metadata?.generation;
    return { ...next, metadata: typeof kept === 'number' ? { ...meta, generation: kept } : meta };
  }
  const before = typeof prev?.metadata?.generation === 'number' ? prev.metadata.generation : 0;
  const same = prev !== undefined && deepEqual(counted(ri, prev), counted(ri, next));
  const generation = prev === undefined ? 1 : same ? before : before + 1;
  return { ...next, metadata: { ...next.metadata, generation } };
}
