// The resources a fake API server serves: built-in kinds, declared ones, and those of stored CRDs; the rest are 404.

import { ApiStatusError } from '../../core/errors.js';
import { InvalidOptionError } from '../../core/options.js';
import type { KubeObject } from '../../core/types.js';
import type { StoredEntry } from '../resource-state.js';
import { statusBody } from '../status.js';
import type { ResourceDefinition, ResourceInfo, ResourceRef } from './paths.js';
import { customResourceVersion, type CustomResourceVersion } from './custom-resources.js';

/** The message kube-apiserver answers (404 NotFound) for a path no API serves. */
export const NOT_SERVED_MESSAGE = 'the server could not find the requested resource';

/** The 404 Status kube-apiserver answers for a resource (or group/version) it does not serve. */
export function notServedError(message: string = NOT_SERVED_MESSAGE): ApiStatusError {
  return new ApiStatusError(404, message, { reason: 'NotFound', status: statusBody(404, message, 'NotFound', {}) });
}

/** A 404 the fake answers as kube-apiserver's fallback handler does: plain text `404 page not found`, not a Status. */
function pageNotFoundError(): ApiStatusError {
  return new ApiStatusError(404, '404 page not found', { reason: 'NotFound' });
}

/** The API groups kube-apiserver v1.37.2 serves itself (`/apis`, no CRD or aggregated API): their unknown paths answer a Status. */
const KUBERNETES_GROUPS = new Set([
  'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io', 'apps', 'authentication.k8s.io',
  'authorization.k8s.io', 'autoscaling', 'batch', 'certificates.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io',
  'events.k8s.io', 'flowcontrol.apiserver.k8s.io', 'networking.k8s.io', 'node.k8s.io', 'policy',
  'rbac.authorization.k8s.io', 'resource.k8s.io', 'scheduling.k8s.io', 'storage.k8s.io', 'storagemigration.k8s.io',
]);

/**
 * What kube-apiserver answers for a resource it does not serve in `group`: the core group and its
 * own groups answer a 404 `Status`; any other group — one no CRD serves, or a CRD's group at a version
 * or plural it does not serve — falls through to the plain-text `404 page not found`.
 */
export function notFoundIn(group: string): ApiStatusError {
  return group === '' || KUBERNETES_GROUPS.has(group) ? notServedError() : pageNotFoundError();
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

/**
 * The built-in resources (by state key) whose kube-apiserver v1.37.2 strategy keeps `metadata.generation`:
 * 1 on create, one more when the spec changes (see `withGeneration`).
 */
const BUILT_IN_GENERATION = new Set([
  'pods', 'replicationcontrollers', 'deployments.apps', 'replicasets.apps', 'statefulsets.apps', 'daemonsets.apps',
  'jobs.batch', 'cronjobs.batch', 'endpointslices.discovery.k8s.io', 'ingresses.networking.k8s.io',
  'networkpolicies.networking.k8s.io', 'customresourcedefinitions.apiextensions.k8s.io',
]);

/** The subresources kube-apiserver v1.37.2 serves for the built-in resources (by state key); the others have none. */
const BUILT_IN_SUBRESOURCES: Readonly<Record<string, readonly string[]>> = {
  pods: ['attach', 'binding', 'ephemeralcontainers', 'eviction', 'exec', 'log', 'portforward', 'proxy', 'resize', 'status'],
  services: ['proxy', 'status'],
  nodes: ['proxy', 'status'],
  namespaces: ['finalize', 'status'],
  serviceaccounts: ['token'],
  persistentvolumeclaims: ['status'],
  persistentvolumes: ['status'],
  replicationcontrollers: ['scale', 'status'],
  'deployments.apps': ['scale', 'status'],
  'replicasets.apps': ['scale', 'status'],
  'statefulsets.apps': ['scale', 'status'],
  'daemonsets.apps': ['status'],
  'jobs.batch': ['status'],
  'cronjobs.batch': ['status'],
  'ingresses.networking.k8s.io': ['status'],
  'customresourcedefinitions.apiextensions.k8s.io': ['status'],
};

/** `widgets` → `Widget`, `policies` → `Policy`, `classes` → `Class`. */
export function inferKind(resource: string): string {
  let singular = resource;
  if (/ies$/.test(resource)) singular = resource.slice(0, -3) + 'y';
  else if (/(sses|xes|ches|shes)$/.test(resource)) singular = resource.slice(0, -2);
  else if (/s$/.test(resource)) singular = resource.slice(0, -1);
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}

interface InfoFields {
  kind: string;
  namespaced: boolean;
  generation: boolean;
  subresources: readonly string[];
  listKind?: string;
}

function info(group: string, version: string, resource: string, f: InfoFields): ResourceInfo {
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return {
    group,
    version,
    resource,
    kind: f.kind,
    listKind: f.listKind ?? `${f.kind}List`,
    apiVersion,
    namespaced: f.namespaced,
    generation: f.generation,
    statusSubresource: f.subresources.includes('status'),
    subresources: f.subresources,
    stateKey: group === '' ? resource : `${resource}.${group}`,
    jsonPrefix: `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(f.kind)},`,
  };
}

const gvrKey = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;

/** The resources one stored CRD serves: each served version, the storage version first, with what it reads from the version. Empty when malformed. */
function crdResources(crd: KubeObject): Array<[ResourceInfo, CustomResourceVersion]> {
  const spec = (crd as { spec?: unknown }).spec as
    | { group?: unknown; scope?: unknown; names?: { plural?: unknown; kind?: unknown; listKind?: unknown }; versions?: unknown }
    | undefined;
  const group = spec?.group;
  const plural = spec?.names?.plural;
  if (typeof group !== 'string' || group === '' || typeof plural !== 'string' || plural === '' || !Array.isArray(spec?.versions)) return [];
  const kind = typeof spec.names?.kind === 'string' && spec.names.kind !== '' ? spec.names.kind : inferKind(plural);
  const listKind = typeof spec.names?.listKind === 'string' && spec.names.listKind !== '' ? spec.names.listKind : undefined;
  const versions = (spec.versions as Array<{ name?: unknown; served?: unknown; storage?: unknown; subresources?: unknown }>)
    .filter((v) => v !== null && typeof v === 'object' && typeof v.name === 'string' && v.name !== '' && v.served !== false)
    .sort((a, b) => Number(b.storage === true) - Number(a.storage === true));
  const subresourcesOf = (v: { subresources?: unknown }): string[] => {
    const sub = v.subresources;
    return sub !== null && typeof sub === 'object' ? ['status', 'scale'].filter((k) => (sub as Record<string, unknown>)[k] != null) : [];
  };
  const namespaced = spec.scope !== 'Cluster';
  const name = crd.metadata?.name ?? `${plural}.${group}`;
  return versions.map((v) => [
    info(group, v.name as string, plural, { kind, namespaced, generation: true, subresources: subresourcesOf(v), listKind }),
    customResourceVersion(name, group, kind, namespaced, v as Record<string, unknown>),
  ]);
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
  #customResources = new WeakMap<ResourceInfo, CustomResourceVersion>();

  constructor(options: ResourceRegistryOptions = {}) {
    this.#inferUnknown = options.inferUnknown ?? false;
    this.#crds = options.customResourceDefinitions ?? (() => []);
    for (const [g, v, r, k, n] of BUILT_IN_RESOURCES) {
      const subresources = BUILT_IN_SUBRESOURCES[g === '' ? r : `${r}.${g}`] ?? [];
      const generation = BUILT_IN_GENERATION.has(g === '' ? r : `${r}.${g}`);
      this.#byGvr.set(gvrKey(g, v, r), info(g, v, r, { kind: k, namespaced: n, generation, subresources }));
    }
  }

  /**
   * What a resource served from a stored CRD reads from its version (schema, field labels), or
   * undefined for a built-in, declared or inferred resource (a declaration wins over a CRD, as it is
   * found first).
   */
  customResource(ri: ResourceInfo): CustomResourceVersion | undefined {
    return this.#customResources.get(ri);
  }

  /** The resource a stored object of `stateKey` at `apiVersion` belongs to, when a stored CRD serves it. */
  customResourceOf(stateKey: string, apiVersion: string | undefined): CustomResourceVersion | undefined {
    const ri = this.#crdResources().find((r) => r.stateKey === stateKey && r.apiVersion === apiVersion);
    return ri === undefined || this.#byGvr.has(gvrKey(ri.group, ri.version, ri.resource)) ? undefined : this.#customResources.get(ri);
  }

  /** Whether unknown resources are inferred rather than 404. */
  get infersUnknown(): boolean {
    return this.#inferUnknown;
  }

  /**
   * Declares (or redeclares) a resource; a redeclaration without `generation` or `statusSubresource`
   * keeps the resource's (a built-in one keeps its other subresources).
   */
  define(def: ResourceDefinition): ResourceInfo {
    const group = def.group ?? '';
    const version = def.version ?? 'v1';
    const had = this.#byGvr.get(gvrKey(group, version, def.resource));
    const generation = def.generation ?? had?.generation ?? false;
    const status = def.statusSubresource ?? had?.statusSubresource ?? true;
    const others = (had?.subresources ?? []).filter((s) => s !== 'status');
    const subresources = status ? ['status', ...others] : others;
    const ri = info(group, version, def.resource, { kind: def.kind ?? inferKind(def.resource), namespaced: def.namespaced ?? true, generation, subresources });
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

  /** The resource a request addresses; throws kube-apiserver's 404 (see {@link notFoundIn}) when it is not served. */
  lookup(group: string, version: string, resource: string): ResourceInfo {
    const ri = this.find(group, version, resource);
    if (ri === undefined) throw notFoundIn(group);
    return ri;
  }

  /**
   * Resolves a {@link ResourceRef} from a test. A {@link ResourceDefinition} with `kind`, `namespaced`,
   * `generation` or `statusSubresource` declares a resource that is not served yet; for one that is
   * served (built in, declared, from a CRD) it is only checked: the served declaration stays, and a
   * field that differs throws an `InvalidOptionError` naming both. Anything else must be served, else a
   * 404 `ApiStatusError` that names it.
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
      const declares = def.kind !== undefined || def.namespaced !== undefined || def.generation !== undefined || def.statusSubresource !== undefined;
      if (declares) {
        const served = this.find(group, version, resource);
        if (served === undefined) return this.define({ ...def, group, version });
        checkSameDeclaration(served, def);
        return served;
      }
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
        const served = crdResources(JSON.parse(entry.json) as KubeObject);
        for (const [ri, cr] of served) this.#customResources.set(ri, cr);
        infos = served.map(([ri]) => ri);
        this.#crdCache.set(entry, infos);
      }
      out.push(...infos);
    }
    return out;
  }
}

/** Throws when a definition passed to a state operation differs from the resource as the server serves it. */
function checkSameDeclaration(served: ResourceInfo, def: ResourceDefinition): void {
  const differences: string[] = [];
  const check = (field: 'kind' | 'namespaced' | 'generation' | 'statusSubresource'): void => {
    const given = def[field];
    if (given !== undefined && given !== served[field]) differences.push(`${field}: ${JSON.stringify(given)} (served: ${JSON.stringify(served[field])})`);
  };
  check('kind');
  check('namespaced');
  check('generation');
  check('statusSubresource');
  if (differences.length === 0) return;
  const gvr = served.group === '' ? `${served.resource} (core ${served.version})` : `${served.resource}.${served.group}/${served.version}`;
  throw new InvalidOptionError(
    `FakeApiServer: the resource definition passed for ${gvr} conflicts with the one the server serves (kind ${served.kind}): ${differences.join(', ')}. ` +
      `A state operation does not re-declare a served resource; pass a matching definition, or a { group, version, resource }, or redeclare it with server.resource(...)`,
  );
}
