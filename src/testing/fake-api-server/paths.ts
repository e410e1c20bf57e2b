// Resource registry and REST path parsing for the fake API server (core, named groups, namespaced or not).

import type { GroupVersionResource, KubeObject } from '../../core/types.js';
import { statusError } from '../resource-state.js';

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

const DEFAULTS: Array<[string, string, string, string, boolean]> = [
  ['', 'v1', 'pods', 'Pod', true],
  ['', 'v1', 'services', 'Service', true],
  ['', 'v1', 'endpoints', 'Endpoints', true],
  ['', 'v1', 'configmaps', 'ConfigMap', true],
  ['', 'v1', 'secrets', 'Secret', true],
  ['', 'v1', 'events', 'Event', true],
  ['', 'v1', 'serviceaccounts', 'ServiceAccount', true],
  ['', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true],
  ['', 'v1', 'replicationcontrollers', 'ReplicationController', true],
  ['', 'v1', 'namespaces', 'Namespace', false],
  ['', 'v1', 'nodes', 'Node', false],
  ['', 'v1', 'persistentvolumes', 'PersistentVolume', false],
  ['apps', 'v1', 'deployments', 'Deployment', true],
  ['apps', 'v1', 'replicasets', 'ReplicaSet', true],
  ['apps', 'v1', 'statefulsets', 'StatefulSet', true],
  ['apps', 'v1', 'daemonsets', 'DaemonSet', true],
  ['batch', 'v1', 'jobs', 'Job', true],
  ['batch', 'v1', 'cronjobs', 'CronJob', true],
  ['coordination.k8s.io', 'v1', 'leases', 'Lease', true],
  ['discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true],
  ['networking.k8s.io', 'v1', 'ingresses', 'Ingress', true],
  ['events.k8s.io', 'v1', 'events', 'Event', true],
  ['rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true],
  ['rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true],
  ['rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false],
  ['rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
  ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false],
  ['storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false],
];

/** `widgets` → `Widget`, `policies` → `Policy`, `classes` → `Class`. */
export function inferKind(resource: string): string {
  let singular = resource;
  if (/ies$/.test(resource)) singular = resource.slice(0, -3) + 'y';
  else if (/(sses|xes|ches|shes)$/.test(resource)) singular = resource.slice(0, -2);
  else if (/s$/.test(resource)) singular = resource.slice(0, -1);
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}

function info(group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceInfo {
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return {
    group,
    version,
    resource,
    kind,
    listKind: `${kind}List`,
    apiVersion,
    namespaced,
    stateKey: group === '' ? resource : `${resource}.${group}`,
    jsonPrefix: `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},`,
  };
}

/** The resources a server knows: common built-in kinds by default, plus declared and inferred ones. */
export class ResourceRegistry {
  #byGvr = new Map<string, ResourceInfo>();
  #strict: boolean;

  /** With `strict`, unknown resources are 404 instead of inferred. */
  constructor(strict = false) {
    this.#strict = strict;
    for (const [g, v, r, k, n] of DEFAULTS) this.#byGvr.set(`${g}/${v}/${r}`, info(g, v, r, k, n));
  }

  /** Declares (or redeclares) a resource. */
  define(def: ResourceDefinition): ResourceInfo {
    const group = def.group ?? '';
    const version = def.version ?? 'v1';
    const ri = info(group, version, def.resource, def.kind ?? inferKind(def.resource), def.namespaced ?? true);
    this.#byGvr.set(`${group}/${version}/${def.resource}`, ri);
    return ri;
  }

  /** Every known resource. */
  all(): ResourceInfo[] {
    return [...this.#byGvr.values()];
  }

  /** The resource a request addresses: declared, default, or inferred (unless strict → 404). */
  lookup(group: string, version: string, resource: string): ResourceInfo {
    const known = this.#byGvr.get(`${group}/${version}/${resource}`);
    if (known !== undefined) return known;
    if (this.#strict) throw statusError(404, 'NotFound', `the server could not find the requested resource`);
    return this.define({ group, version, resource });
  }

  /** Resolves a {@link ResourceRef} from a test. */
  resolve(ref: ResourceRef): ResourceInfo {
    if (typeof ref !== 'string') {
      const group = ref.group ?? '';
      const version = ref.version ?? this.#versionOf(group, ref.resource);
      if ('kind' in ref || 'namespaced' in ref) {
        const def = ref as ResourceDefinition;
        if (def.kind !== undefined || def.namespaced !== undefined) return this.define({ ...def, group, version });
      }
      return this.lookup(group, version, ref.resource);
    }
    const dot = ref.indexOf('.');
    const resource = dot < 0 ? ref : ref.slice(0, dot);
    const group = dot < 0 ? '' : ref.slice(dot + 1);
    return this.lookup(group, this.#versionOf(group, resource), resource);
  }

  #versionOf(group: string, resource: string): string {
    for (const ri of this.#byGvr.values()) if (ri.group === group && ri.resource === resource) return ri.version;
    return 'v1';
  }
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
  return { apiVersion: ri.apiVersion, kind: ri.kind, metadata: meta, ...rest } as KubeObject;
}
