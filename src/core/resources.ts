// Typed resource descriptors: each built-in resource's group, version, plural, kind and scope, bound to its JSON object type.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { DaemonSet, Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type {
  ConfigMap,
  Endpoints,
  Event,
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  ReplicationController,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Ingress, NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import type { GroupVersionResource } from './types.js';

/** The key of the type-only property that carries a descriptor's object type. Never set at run time. */
declare const objectType: unique symbol;

/**
 * A resource and the type of its objects, bound together: a {@link GroupVersionResource} plus the
 * kind and scope, and (at the type level only) the JSON type `T` of one object. Pass one to
 * `SharedInformerFactory.forResource` and the informer is typed without a type argument:
 * `factory.forResource(resources.pods)` is a `SharedIndexInformer<Pod>`.
 *
 * The built-in resources have descriptors in {@link resources}. For a custom resource, write one:
 *
 * ```ts
 * interface Widget { apiVersion?: 'example.com/v1'; kind?: 'Widget'; metadata?: ObjectMeta; spec?: { size: number } }
 * const widgets: ResourceDescriptor<Widget> = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
 * const informer = factory.forResource(widgets); // SharedIndexInformer<Widget>
 * ```
 *
 * A descriptor is also a valid `ResourceDefinition` of the fake API server (`server.resource(widgets)`).
 */
export interface ResourceDescriptor<T = unknown> extends GroupVersionResource {
  /** The API group, `''` for the core group. */
  readonly group: string;
  /** The API version, e.g. `v1`. */
  readonly version: string;
  /** The plural resource name, as in the URL and `kubectl api-resources`: `pods`. */
  readonly resource: string;
  /** The kind of one object: `Pod`. */
  readonly kind: string;
  /** Whether objects live in a namespace (`pods`) or not (`nodes`, `namespaces`). */
  readonly namespaced: boolean;
  /** Type-only: the object type `T`. Absent at run time. */
  readonly [objectType]?: T;
}

/** The object type of a descriptor: `ObjectOf<typeof resources.pods>` is `Pod` (from `kubernetes-types`). */
export type ObjectOf<D> = D extends ResourceDescriptor<infer T> ? T : never;

/**
 * The descriptor of a built-in resource: a {@link ResourceDescriptor} whose fields have literal types
 * (`group: ''`, `resource: 'pods'`), which the type-level check of `forResource<T>(gvr)` reads.
 */
export interface BuiltInResource<T, G extends string, V extends string, R extends string, K extends string, N extends boolean>
  extends ResourceDescriptor<T> {
  /** The API group, `''` for the core group. */
  readonly group: G;
  /** The API version. */
  readonly version: V;
  /** The plural resource name. */
  readonly resource: R;
  /** The kind of one object. */
  readonly kind: K;
  /** Whether objects live in a namespace. */
  readonly namespaced: N;
}

/** The type of {@link resources}: one {@link BuiltInResource} per built-in resource, keyed by its plural name. */
export interface BuiltInResources {
  /** `pods` (v1, namespaced): `Pod` objects from `kubernetes-types/core/v1`. */
  readonly pods: BuiltInResource<Pod, '', 'v1', 'pods', 'Pod', true>;
  /** `services` (v1, namespaced): `Service` objects from `kubernetes-types/core/v1`. */
  readonly services: BuiltInResource<Service, '', 'v1', 'services', 'Service', true>;
  /** `endpoints` (v1, namespaced): `Endpoints` objects from `kubernetes-types/core/v1`. */
  readonly endpoints: BuiltInResource<Endpoints, '', 'v1', 'endpoints', 'Endpoints', true>;
  /** `configmaps` (v1, namespaced): `ConfigMap` objects from `kubernetes-types/core/v1`. */
  readonly configmaps: BuiltInResource<ConfigMap, '', 'v1', 'configmaps', 'ConfigMap', true>;
  /** `secrets` (v1, namespaced): `Secret` objects from `kubernetes-types/core/v1`. */
  readonly secrets: BuiltInResource<Secret, '', 'v1', 'secrets', 'Secret', true>;
  /** `events` (v1, namespaced): `Event` objects from `kubernetes-types/core/v1`. */
  readonly events: BuiltInResource<Event, '', 'v1', 'events', 'Event', true>;
  /** `serviceaccounts` (v1, namespaced): `ServiceAccount` objects from `kubernetes-types/core/v1`. */
  readonly serviceaccounts: BuiltInResource<ServiceAccount, '', 'v1', 'serviceaccounts', 'ServiceAccount', true>;
  /** `persistentvolumeclaims` (v1, namespaced): `PersistentVolumeClaim` objects from `kubernetes-types/core/v1`. */
  readonly persistentvolumeclaims: BuiltInResource<PersistentVolumeClaim, '', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true>;
  /** `replicationcontrollers` (v1, namespaced): `ReplicationController` objects from `kubernetes-types/core/v1`. */
  readonly replicationcontrollers: BuiltInResource<ReplicationController, '', 'v1', 'replicationcontrollers', 'ReplicationController', true>;
  /** `namespaces` (v1, cluster-scoped): `Namespace` objects from `kubernetes-types/core/v1`. */
  readonly namespaces: BuiltInResource<Namespace, '', 'v1', 'namespaces', 'Namespace', false>;
  /** `nodes` (v1, cluster-scoped): `Node` objects from `kubernetes-types/core/v1`. */
  readonly nodes: BuiltInResource<Node, '', 'v1', 'nodes', 'Node', false>;
  /** `persistentvolumes` (v1, cluster-scoped): `PersistentVolume` objects from `kubernetes-types/core/v1`. */
  readonly persistentvolumes: BuiltInResource<PersistentVolume, '', 'v1', 'persistentvolumes', 'PersistentVolume', false>;
  /** `deployments` (apps/v1, namespaced): `Deployment` objects from `kubernetes-types/apps/v1`. */
  readonly deployments: BuiltInResource<Deployment, 'apps', 'v1', 'deployments', 'Deployment', true>;
  /** `replicasets` (apps/v1, namespaced): `ReplicaSet` objects from `kubernetes-types/apps/v1`. */
  readonly replicasets: BuiltInResource<ReplicaSet, 'apps', 'v1', 'replicasets', 'ReplicaSet', true>;
  /** `statefulsets` (apps/v1, namespaced): `StatefulSet` objects from `kubernetes-types/apps/v1`. */
  readonly statefulsets: BuiltInResource<StatefulSet, 'apps', 'v1', 'statefulsets', 'StatefulSet', true>;
  /** `daemonsets` (apps/v1, namespaced): `DaemonSet` objects from `kubernetes-types/apps/v1`. */
  readonly daemonsets: BuiltInResource<DaemonSet, 'apps', 'v1', 'daemonsets', 'DaemonSet', true>;
  /** `jobs` (batch/v1, namespaced): `Job` objects from `kubernetes-types/batch/v1`. */
  readonly jobs: BuiltInResource<Job, 'batch', 'v1', 'jobs', 'Job', true>;
  /** `cronjobs` (batch/v1, namespaced): `CronJob` objects from `kubernetes-types/batch/v1`. */
  readonly cronjobs: BuiltInResource<CronJob, 'batch', 'v1', 'cronjobs', 'CronJob', true>;
  /** `leases` (coordination.k8s.io/v1, namespaced): `Lease` objects from `kubernetes-types/coordination/v1`. */
  readonly leases: BuiltInResource<Lease, 'coordination.k8s.io', 'v1', 'leases', 'Lease', true>;
  /** `endpointslices` (discovery.k8s.io/v1, namespaced): `EndpointSlice` objects from `kubernetes-types/discovery/v1`. */
  readonly endpointslices: BuiltInResource<EndpointSlice, 'discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true>;
  /** `ingresses` (networking.k8s.io/v1, namespaced): `Ingress` objects from `kubernetes-types/networking/v1`. */
  readonly ingresses: BuiltInResource<Ingress, 'networking.k8s.io', 'v1', 'ingresses', 'Ingress', true>;
  /** `networkpolicies` (networking.k8s.io/v1, namespaced): `NetworkPolicy` objects from `kubernetes-types/networking/v1`. */
  readonly networkpolicies: BuiltInResource<NetworkPolicy, 'networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true>;
  /** `roles` (rbac.authorization.k8s.io/v1, namespaced): `Role` objects from `kubernetes-types/rbac/v1`. */
  readonly roles: BuiltInResource<Role, 'rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true>;
  /** `rolebindings` (rbac.authorization.k8s.io/v1, namespaced): `RoleBinding` objects from `kubernetes-types/rbac/v1`. */
  readonly rolebindings: BuiltInResource<RoleBinding, 'rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true>;
  /** `clusterroles` (rbac.authorization.k8s.io/v1, cluster-scoped): `ClusterRole` objects from `kubernetes-types/rbac/v1`. */
  readonly clusterroles: BuiltInResource<ClusterRole, 'rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false>;
  /** `clusterrolebindings` (rbac.authorization.k8s.io/v1, cluster-scoped): `ClusterRoleBinding` objects from `kubernetes-types/rbac/v1`. */
  readonly clusterrolebindings: BuiltInResource<ClusterRoleBinding, 'rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false>;
  /** `customresourcedefinitions` (apiextensions.k8s.io/v1, cluster-scoped): `CustomResourceDefinition` objects from `kubernetes-types/apiextensions/v1`. */
  readonly customresourcedefinitions: BuiltInResource<CustomResourceDefinition, 'apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false>;
  /** `storageclasses` (storage.k8s.io/v1, cluster-scoped): `StorageClass` objects from `kubernetes-types/storage/v1`. */
  readonly storageclasses: BuiltInResource<StorageClass, 'storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false>;
}

/**
 * Descriptors of the common built-in resources, keyed by their plural resource name (as in the URL
 * and `kubectl api-resources`). Each carries its object type from the `kubernetes-types` package
 * (plain JSON as the API server sends it: timestamps are strings, quantities are strings):
 *
 * ```ts
 * const pods = factory.forResource(resources.pods);                 // SharedIndexInformer<Pod>
 * const deployments = factory.forResource(resources.deployments);   // SharedIndexInformer<Deployment>
 * ```
 *
 * core/v1: `pods`, `services`, `endpoints`, `configmaps`, `secrets`, `events`, `serviceaccounts`,
 * `persistentvolumeclaims`, `replicationcontrollers`, `namespaces`, `nodes`, `persistentvolumes`;
 * apps/v1: `deployments`, `replicasets`, `statefulsets`, `daemonsets`; batch/v1: `jobs`, `cronjobs`;
 * coordination.k8s.io/v1: `leases`; discovery.k8s.io/v1: `endpointslices`; networking.k8s.io/v1:
 * `ingresses`, `networkpolicies`; rbac.authorization.k8s.io/v1: `roles`, `rolebindings`,
 * `clusterroles`, `clusterrolebindings`; apiextensions.k8s.io/v1: `customresourcedefinitions`;
 * storage.k8s.io/v1: `storageclasses`. For anything else, write a {@link ResourceDescriptor} or use
 * `forResource<T>(gvr)`.
 */
export const resources: BuiltInResources = Object.freeze({
  pods: Object.freeze({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true }),
  services: Object.freeze({ group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true }),
  endpoints: Object.freeze({ group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true }),
  configmaps: Object.freeze({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true }),
  secrets: Object.freeze({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true }),
  events: Object.freeze({ group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true }),
  serviceaccounts: Object.freeze({ group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true }),
  persistentvolumeclaims: Object.freeze({ group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true }),
  replicationcontrollers: Object.freeze({ group: '', version: 'v1', resource: 'replicationcontrollers', kind: 'ReplicationController', namespaced: true }),
  namespaces: Object.freeze({ group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false }),
  nodes: Object.freeze({ group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false }),
  persistentvolumes: Object.freeze({ group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false }),
  deployments: Object.freeze({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true }),
  replicasets: Object.freeze({ group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true }),
  statefulsets: Object.freeze({ group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true }),
  daemonsets: Object.freeze({ group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true }),
  jobs: Object.freeze({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true }),
  cronjobs: Object.freeze({ group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true }),
  leases: Object.freeze({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true }),
  endpointslices: Object.freeze({ group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true }),
  ingresses: Object.freeze({ group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress', namespaced: true }),
  networkpolicies: Object.freeze({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true }),
  roles: Object.freeze({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true }),
  rolebindings: Object.freeze({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true }),
  clusterroles: Object.freeze({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false }),
  clusterrolebindings: Object.freeze({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false }),
  customresourcedefinitions: Object.freeze({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false }),
  storageclasses: Object.freeze({ group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false }),
});

/**
 * The built-in descriptors, keyed by the `apiVersion/kind` of their objects: `'v1/Pod'`,
 * `'apps/v1/Deployment'`. What {@link GroupVersionResourceFor} looks a type up in.
 */
export type BuiltInResourcesByKind = {
  [N in keyof BuiltInResources as `${BuiltInResources[N]['group'] extends ''
    ? BuiltInResources[N]['version']
    : `${BuiltInResources[N]['group']}/${BuiltInResources[N]['version']}`}/${BuiltInResources[N]['kind']}`]: BuiltInResources[N];
};

/**
 * What `forResource<T>(gvr)` is refused with when `T` is a client-node model class (`V1Pod`): the
 * cache holds plain JSON, whose timestamps are strings, not `Date`s.
 */
export interface NotAWireType {
  /** Never satisfiable: the message is the point. */
  readonly 'kube-informer: T has Date timestamps (a client-node model class); cached objects are plain JSON: type them with kubernetes-types or use a resources.* descriptor': never;
}

/**
 * The resource argument `forResource<T>(gvr)` accepts for objects of type `T` — a type-level check
 * that the resource and the type agree:
 *
 * - `T` names a built-in kind through literal `apiVersion` and `kind` types (every
 *   `kubernetes-types` object does): only that kind's resource, e.g. `{ group: '', version: 'v1',
 *   resource: 'pods' }` for `Pod`. `forResource<Pod>({ ..., resource: 'configmaps' })` does not compile.
 * - `T` has `Date` timestamps (client-node's `V1Pod` and friends): nothing ({@link NotAWireType}).
 * - Anything else (a custom resource's type, `KubeObject`, `unknown`): any {@link GroupVersionResource}.
 *   The check cannot see a built-in resource paired with a type that has no literal kind: prefer the
 *   descriptors of {@link resources}, which need no type argument at all.
 */
export type GroupVersionResourceFor<T> = 0 extends 1 & T
  ? GroupVersionResource // `any`: nothing to check
  : (
        T extends {
          /** The object's metadata. */
          metadata?: {
            /** A `Date` in client-node's model classes, a string on the wire. */
            creationTimestamp?: infer C;
          };
        }
          ? [NonNullable<C>] extends [never]
            ? false
            : NonNullable<C> extends Date
              ? true
              : false
          : false
      ) extends true
    ? GroupVersionResource & NotAWireType // a client-node model class
    : T extends {
          /** A literal type in `kubernetes-types`: `'v1'`, `'apps/v1'`. */
          apiVersion?: infer A extends string;
          /** A literal type in `kubernetes-types`: `'Pod'`. */
          kind?: infer K extends string;
        }
      ? `${A}/${K}` extends keyof BuiltInResourcesByKind
        ? Pick<BuiltInResourcesByKind[`${A}/${K}`], 'group' | 'version' | 'resource'> // a built-in kind: its resource only
        : GroupVersionResource
      : GroupVersionResource;
