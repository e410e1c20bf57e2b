// The resources a fake API server serves: built-in kinds, declared ones, and those of stored CRDs; the rest are 404.

import { ApiStatusError } from '../../core/errors.js';
import type { KubeObject } from '../../core/types.js';
import type { StoredEntry } from '../resource-state.js';
import { statusBody } from '../status.js';
import type { ResourceDefinition, ResourceInfo, ResourceRef } from './paths.js';

/** The message kube-apiserver answers (404 NotFound) for a path no API serves. */
export const NOT_SERVED_MESSAGE = 'the server could not find the requested resource';

/** The 404 Status kube-apiserver answers for a resource (or group/version) it does not serve. */
export function notServedError(message: string = NOT_SERVED_MESSAGE): ApiStatusError {
  return new ApiStatusError(404, message, { reason: 'NotFound', status: statusBody(404, message, 'NotFound', {}) });
}

/** Whether `group/version/resource` is one of {@link BUILT_IN_RESOURCES} (else: a custom resource, served from unstructured objects). */
export function isBuiltInResource(ri: { group: string; version: string; resource: string }): boolean {
  return BUILT_IN_KEYS.has(`${ri.group}/${ri.version}/${ri.resource}`);
}

/** The state key CustomResourceDefinitions are stored under. */
export const CRD_STATE_KEY = 'customresourcedefinitions.apiextensions.k8s.io';

/** The built-in resources: `[group, version, plural, kind, namespaced]`, each served only at that group and version. */
export const BUILT_IN_RESOURCES: ReadonlyArray<readonly [string, string, string, string, boolean]> = [
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
  ['networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true],
  ['events.k8s.io', 'v1', 'events', 'Event', true],
  ['rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true],
  ['rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true],
  ['rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false],
  ['rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
  ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false],
  ['storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false],
];

const BUILT_IN_KEYS = new Set(BUILT_IN_RESOURCES.map(([g, v, r]) => `${g}/${v}/${r}`));

/** `widgets` → `Widget`, `policies` → `Policy`, `classes` → `Class`. */
export function inferKind(resource: string): string {
  let singular = resource;
  if (/ies$/.test(resource)) singular = resource.slice(0, -3) + 'y';
  else if (/(sses|xes|ches|shes)$/.test(resource)) singular = resource.slice(0, -2);
  else if (/s$/.test(resource)) singular = resource.slice(0, -1);
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}

function info(group: string, version: string, resource: string, kind: string, namespaced: boolean, generation: boolean, listKind = `${kind}List`): ResourceInfo {
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return {
    group,
    version,
    resource,
    kind,
    listKind,
    apiVersion,
    namespaced,
    generation,
    stateKey: group === '' ? resource : `${resource}.${group}`,
    jsonPrefix: `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},`,
  };
}

const gvrKey = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;

/** The resources one stored CRD serves: each served version, the storage version first. Empty when malformed. */
function crdResources(crd: KubeObject): ResourceInfo[] {
  const spec = (crd as { spec?: unknown }).spec as
    | { group?: unknown; scope?: unknown; names?: { plural?: unknown; kind?: unknown; listKind?: unknown }; versions?: unknown }
    | undefined;
  const group = spec?.group;
  const plural = spec?.names?.plural;
  if (typeof group !== 'string' || group === '' || typeof plural !== 'string' || plural === '' || !Array.isArray(spec?.versions)) return [];
  const kind = typeof spec.names?.kind === 'string' && spec.names.kind !== '' ? spec.names.kind : inferKind(plural);
  const listKind = typeof spec.names?.listKind === 'string' && spec.names.listKind !== '' ? spec.names.listKind : undefined;
  const versions = (spec.versions as Array<{ name?: unknown; served?: unknown; storage?: unknown }>)
    .filter((v) => v !== null && typeof v === 'object' && typeof v.name === 'string' && v.name !== '' && v.served !== false)
    .sort((a, b) => Number(b.storage === true) - Number(a.storage === true));
  return versions.map((v) => info(group, v.name as string, plural, kind, spec.scope !== 'Cluster', true, listKind));
}

/** Options of a {@link ResourceRegistry}. */
export interface ResourceRegistryOptions {
  /** Serve an unknown resource by inferring it (kind from the plural, namespaced) instead of 404. Default false. */
  inferUnknown?: boolean;
  /** The stored CustomResourceDefinitions, whose served versions are served too. Default: none. */
  customResourceDefinitions?: () => readonly StoredEntry[];
}

/**
 * The resources a server knows, matched on the exact group, version and plural: the built-in kinds,
 * declared ones, and the served versions of the stored CRDs. Anything else is 404 (like
 * kube-apiserver) unless `inferUnknown`.
 */
export class ResourceRegistry {
  #byGvr = new Map<string, ResourceInfo>();
  #inferUnknown: boolean;
  #crds: () => readonly StoredEntry[];
  #crdCache = new WeakMap<StoredEntry, ResourceInfo[]>();

  constructor(options: ResourceRegistryOptions = {}) {
    this.#inferUnknown = options.inferUnknown ?? false;
    this.#crds = options.customResourceDefinitions ?? (() => []);
    for (const [g, v, r, k, n] of BUILT_IN_RESOURCES) this.#byGvr.set(gvrKey(g, v, r), info(g, v, r, k, n, false));
  }

  /** Whether unknown resources are inferred rather than 404. */
  get infersUnknown(): boolean {
    return this.#inferUnknown;
  }

  /** Declares (or redeclares) a resource; a redeclaration without `generation` keeps the resource's. */
  define(def: ResourceDefinition): ResourceInfo {
    const group = def.group ?? '';
    const version = def.version ?? 'v1';
    const generation = def.generation ?? this.#byGvr.get(gvrKey(group, version, def.resource))?.generation ?? false;
    const ri = info(group, version, def.resource, def.kind ?? inferKind(def.resource), def.namespaced ?? true, generation);
    this.#byGvr.set(gvrKey(group, version, def.resource), ri);
    return ri;
  }

  /** Every resource served now: built in, declared (or inferred), then those of the stored CRDs. */
  all(): ResourceInfo[] {
    const out = [...this.#byGvr.values()];
    for (const ri of this.#crdResources()) if (!this.#byGvr.has(gvrKey(ri.group, ri.version, ri.resource))) out.push(ri);
    return out;
  }

  /** Whether any resource is served at `group`/`version` (for discovery). */
  servesGroupVersion(group: string, version: string): boolean {
    return this.all().some((ri) => ri.group === group && ri.version === version);
  }

  /** The resource at exactly this group, version and plural, or undefined when it is not served. */
  find(group: string, version: string, resource: string): ResourceInfo | undefined {
    const known = this.#byGvr.get(gvrKey(group, version, resource));
    if (known !== undefined) return known;
    for (const ri of this.#crdResources()) if (ri.group === group && ri.version === version && ri.resource === resource) return ri;
    return this.#inferUnknown ? this.define({ group, version, resource }) : undefined;
  }

  /** The resource a request addresses; throws kube-apiserver's 404 NotFound Status when it is not served. */
  lookup(group: string, version: string, resource: string): ResourceInfo {
    const ri = this.find(group, version, resource);
    if (ri === undefined) throw notServedError();
    return ri;
  }

  /**
   * Resolves a {@link ResourceRef} from a test. A {@link ResourceDefinition} with `kind`, `namespaced` or
   * `generation` declares the resource; anything else must be served, else a 404 `ApiStatusError` that names it.
   */
  resolve(ref: ResourceRef): ResourceInfo {
    let group: string;
    let version: string;
    let resource: string;
    if (typeof ref !== 'string') {
      group = ref.group ?? '';
      resource = ref.resource;
      version = ref.version ?? this.#versionOf(group, resource);
      const def = ref as ResourceDefinition;
      if (def.kind !== undefined || def.namespaced !== undefined || def.generation !== undefined) return this.define({ ...def, group, version });
    } else {
      const dot = ref.indexOf('.');
      resource = dot < 0 ? ref : ref.slice(0, dot);
      group = dot < 0 ? '' : ref.slice(dot + 1);
      version = this.#versionOf(group, resource);
    }
    const ri = this.find(group, version, resource);
    if (ri === undefined) throw notServedError(this.#notServedHint(group, version, resource));
    return ri;
  }

  #notServedHint(group: string, version: string, resource: string): string {
    const gv = group === '' ? `core ${version}` : `${group}/${version}`;
    const elsewhere = this.all()
      .filter((ri) => ri.resource === resource)
      .map((ri) => (ri.group === '' ? `core ${ri.version}` : `${ri.group}/${ri.version}`));
    const hint = elsewhere.length > 0 ? ` (${resource} is served in ${elsewhere.join(', ')})` : '';
    return (
      `${NOT_SERVED_MESSAGE}: ${resource} in ${gv} is neither built in nor declared${hint}; declare it with ` +
      `server.resource({ group, version, resource, kind, namespaced }), the resources option, or a CustomResourceDefinition`
    );
  }

  #versionOf(group: string, resource: string): string {
    for (const ri of this.#byGvr.values()) if (ri.group === group && ri.resource === resource) return ri.version;
    for (const ri of this.#crdResources()) if (ri.group === group && ri.resource === resource) return ri.version;
    return 'v1';
  }

  #crdResources(): ResourceInfo[] {
    const out: ResourceInfo[] = [];
    for (const entry of this.#crds()) {
      let infos = this.#crdCache.get(entry);
      if (infos === undefined) {
        infos = crdResources(JSON.parse(entry.json) as KubeObject);
        this.#crdCache.set(entry, infos);
      }
      out.push(...infos);
    }
    return out;
  }
}
