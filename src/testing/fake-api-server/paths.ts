// Resource types and REST path parsing for the fake API server (core, named groups, namespaced or not).

import type { GroupVersionResource, KubeObject } from '../../core/types.js';
import { statusError } from '../resource-state.js';
import { serverMetadata } from './defaults.js';

/** Declares a resource the fake server serves (see {@link FakeApiServer.resource}). */
export interface ResourceDefinition {
  /** API group; `''` (the default) is the core group served under `/api/v1`. */
  group?: string;
  /** API version. Default `'v1'`. */
  version?: string;
  /** Plural resource name, as in the URL (`pods`, `leases`, `widgets`). */
  resource: string;
  /** Kind of one object (`Pod`). Default: inferred from `resource` (`widgets` → `Widget`). */
  kind?: string;
  /** Whether objects live in namespaces. Default true. */
  namespaced?: boolean;
  /**
   * Whether the server keeps `metadata.generation`, as kube-apiserver does for custom resources and
   * workloads: 1 on create, one more on each write that changes anything but `metadata` (and `status`,
   * when the resource has a status subresource: a status or metadata-only write keeps it), one more when a DELETE
   * marks an object held by finalizers. Default false (or, when redeclaring, what the resource had):
   * the generation is whatever the writer sent. Resources served from a CustomResourceDefinition
   * always keep it, and so do the built-in kinds whose kube-apiserver strategy keeps one (pods,
   * replication controllers, deployments, replica sets, stateful sets, daemon sets, jobs, cron jobs,
   * endpoint slices, ingresses, network policies, CRDs), counting changes of their `spec` (a
   * Deployment's annotations too); on the other built-in kinds an update keeps the stored generation.
   */
  generation?: boolean;
  /**
   * Whether the resource has a status subresource, as a CRD with `subresources.status` has (most do):
   * `/status` is served and writes only `status`; a status sent with a POST, PUT, PATCH or apply of the
   * main resource is dropped, as kube-apiserver drops it. `false`: no `/status` (404), status is written
   * with the rest of the object and counts for the generation. Default true (or, when redeclaring,
   * what the resource had). Built-in kinds have the subresources kube-apiserver gives them.
   */
  statusSubresource?: boolean;
}

/** A resource as the server knows it, every field resolved. */
export interface ResourceInfo {
  /** API group (`''` = core). */
  readonly group: string;
  /** API version. */
  readonly version: string;
  /** Plural resource name. */
  readonly resource: string;
  /** Kind of one object. */
  readonly kind: string;
  /** Kind of a list (`<Kind>List`). */
  readonly listKind: string;
  /** `v1` or `group/version`. */
  readonly apiVersion: string;
  /** Whether objects live in namespaces. */
  readonly namespaced: boolean;
  /** Whether the server keeps `metadata.generation` (see {@link ResourceDefinition.generation}). */
  readonly generation: boolean;
  /** Whether `/status` is served (see {@link ResourceDefinition.statusSubresource}). */
  readonly statusSubresource: boolean;
  /** The subresources kube-apiserver serves for it (`status`, `scale`, `log`, ...); those the fake does not model answer 501. */
  readonly subresources: readonly string[];
  /** The name the shared state stores it under: `resource` for core, `resource.group` otherwise. */
  readonly stateKey: string;
  /** The JSON every stored object of this resource starts with (`{"apiVersion":..,"kind":..,`). */
  readonly jsonPrefix: string;
}

/**
 * A resource reference accepted by the server's state operations: a {@link GroupVersionResource}, a
 * {@link ResourceDefinition}, or a string: `'pods'` (core) or `'<resource>.<group>'`
 * (`'leases.coordination.k8s.io'`, `'deployments.apps'`).
 */
export type ResourceRef = string | GroupVersionResource | ResourceDefinition;

/** A parsed request path. */
export interface ParsedPath {
  /** API group (`''` for `/api/v1`). */
  group: string;
  /** API version. */
  version: string;
  /** Namespace from `/namespaces/{ns}/...`, when present. */
  namespace?: string;
  /** Plural resource name. */
  resource: string;
  /** Object name, for a single-object path. */
  name?: string;
  /** Subresource (`status`), when present. */
  subresource?: string;
}

/** Parses `/api/v1/...` and `/apis/{group}/{version}/...` paths; `undefined` for anything else. */
export function parsePath(pathname: string): ParsedPath | undefined {
  const segs = pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 3) {
    group = '';
    version = segs[1];
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1];
    version = segs[2];
    rest = segs.slice(3);
  } else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    if (rest.length > 5) return undefined;
    return { group, version, namespace: rest[1], resource: rest[2], name: rest[3], subresource: rest[4] };
  }
  if (rest.length > 3) return undefined;
  return { group, version, resource: rest[0], name: rest[1], subresource: rest[2] };
}

/**
 * The object as the server stores it: `apiVersion` and `kind` first (so list items can drop them
 * cheaply), namespace set for namespaced resources (default `defaultNamespace`) and removed otherwise,
 * `creationTimestamp` filled in when missing.
 */
export function normalizeObject(ri: ResourceInfo, obj: KubeObject, defaultNamespace: string, now: () => Date): KubeObject {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw statusError(400, 'BadRequest', 'the request body is not a JSON object');
  }
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj as KubeObject & Record<string, unknown>;
  const meta = { ...(metadata ?? {}) };
  if (ri.namespaced) meta.namespace = typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : defaultNamespace;
  else delete meta.namespace;
  if (meta.creationTimestamp === undefined) meta.creationTimestamp = now().toISOString().replace(/\.\d+Z$/, 'Z');
  return { apiVersion: ri.apiVersion, kind: ri.kind, metadata: serverMetadata(ri.stateKey, meta), ...rest };
}
