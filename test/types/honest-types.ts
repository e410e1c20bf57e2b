// Compile-time checks that objects are typed as the JSON they are, read-only where shared, and bound to their resource.
//
// Compiled by `npm run typecheck` only: nothing here runs (the checks live in functions never called).
// Each `@ts-expect-error` line is a mistake that must not compile; the lines without one must.

import type { V1Pod } from '@kubernetes/client-node';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap, Pod } from 'kubernetes-types/core/v1.js';
import { expectTypeOf } from 'vitest';
import {
  DeletedFinalStateUnknown,
  deepCopy,
  filteringResourceEventHandler,
  resources,
  type DeepReadonly,
  type GroupVersionResource,
  type KubeObject,
  type ObjectMeta,
  type ObjectOf,
  type ResourceDescriptor,
  type ResourceEventHandler,
  type SharedIndexInformer,
  type SharedInformerFactory,
} from '../../src/index.js';

/** A custom resource's type, as a user would write it. */
interface Widget {
  apiVersion?: 'example.com/v1';
  kind?: 'Widget';
  metadata?: ObjectMeta;
  spec?: { size: number; tags?: string[] };
}

export function timestampsAreStrings(pod: DeepReadonly<Pod>, model: V1Pod): void {
  expectTypeOf(pod.metadata?.creationTimestamp).toEqualTypeOf<string | undefined>();
  // @ts-expect-error -- creationTimestamp is an RFC 3339 string on the wire, not a Date
  pod.metadata?.creationTimestamp?.getTime();
  // @ts-expect-error -- the same for a plain (mutable) Pod
  (pod as Pod).metadata?.creationTimestamp?.getTime();
  new Date(pod.metadata?.creationTimestamp ?? 0).getTime(); // the honest way to a Date
  // client-node's model classes do have Dates: they are a different type, and not what the cache holds.
  model.metadata?.creationTimestamp?.getTime();
}

export function descriptorsTypeTheInformer(factory: SharedInformerFactory): void {
  expectTypeOf(factory.forResource(resources.pods)).toEqualTypeOf<SharedIndexInformer<Pod>>();
  expectTypeOf(factory.forResource(resources.configmaps)).toEqualTypeOf<SharedIndexInformer<ConfigMap>>();
  expectTypeOf(factory.forResource(resources.deployments)).toEqualTypeOf<SharedIndexInformer<Deployment>>();
  expectTypeOf<ObjectOf<typeof resources.pods>>().toEqualTypeOf<Pod>();

  // A type argument that agrees with the descriptor or the GVR is fine.
  factory.forResource<Pod>(resources.pods);
  factory.forResource<Pod>({ group: '', version: 'v1', resource: 'pods' });
  factory.forResource<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' });

  // @ts-expect-error -- a pod informer cannot be declared over configmaps
  factory.forResource<Pod>({ group: '', version: 'v1', resource: 'configmaps' });
  // @ts-expect-error -- nor over the pods of another group
  factory.forResource<Pod>({ group: 'apps', version: 'v1', resource: 'pods' });
  // @ts-expect-error -- a Deployment lives in apps/v1, not extensions/v1beta1
  factory.forResource<Deployment>({ group: 'extensions', version: 'v1beta1', resource: 'deployments' });
  // @ts-expect-error -- a descriptor of one kind with a type argument of another
  factory.forResource<ConfigMap>(resources.pods);
  // @ts-expect-error -- client-node's V1Pod has Date timestamps: not the JSON the cache holds
  factory.forResource<V1Pod>({ group: '', version: 'v1', resource: 'pods' });
  // @ts-expect-error -- a GVR typed only `GroupVersionResource` cannot prove it names pods
  factory.forResource<Pod>({ group: '', version: 'v1', resource: 'pods' } as GroupVersionResource);

  // Custom resources keep forResource<T>(gvr), or a descriptor of their own.
  expectTypeOf(factory.forResource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' })).toEqualTypeOf<
    SharedIndexInformer<Widget>
  >();
  const widgets: ResourceDescriptor<Widget> = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
  expectTypeOf(factory.forResource(widgets)).toEqualTypeOf<SharedIndexInformer<Widget>>();
  // No type argument, no descriptor: the objects are `unknown`, as before.
  expectTypeOf(factory.forResource({ group: 'example.com', version: 'v1', resource: 'widgets' })).toEqualTypeOf<SharedIndexInformer<unknown>>();
  // A type without literal apiVersion/kind cannot be checked against the resource (documented limit).
  factory.forResource<KubeObject>({ group: '', version: 'v1', resource: 'configmaps' });
}

export function handlersGetReadOnlyObjects(pods: SharedIndexInformer<Pod>): void {
  pods.addEventHandler({
    onAdd: (pod) => {
      expectTypeOf(pod).toEqualTypeOf<DeepReadonly<Pod>>();
      // @ts-expect-error -- the handler's object is the cache's own
      pod.metadata!.name = 'renamed';
      // @ts-expect-error -- deeply: its labels too
      pod.metadata!.labels!.app = 'other';
      // @ts-expect-error -- and its arrays
      pod.spec?.containers.push({ name: 'sidecar' });
    },
    onUpdate: (oldPod, newPod) => {
      // @ts-expect-error -- the old object is read-only
      oldPod.status = {};
      // @ts-expect-error -- and so is the new one
      newPod.status = {};
    },
    onDelete: (obj) => {
      if (obj instanceof DeletedFinalStateUnknown) {
        expectTypeOf(obj.obj).toEqualTypeOf<DeepReadonly<Pod>>();
        // @ts-expect-error -- a tombstone's last known state is read-only too
        obj.obj.metadata = {};
      } else {
        expectTypeOf(obj).toEqualTypeOf<DeepReadonly<Pod>>();
      }
    },
  });
  // @ts-expect-error -- a handler that declares a mutable Pod parameter is refused: it would get the cache's object
  pods.addEventHandler({ onAdd: (pod: Pod) => void (pod.metadata = {}) });
  // A handler that takes `unknown` (e.g. a key function) is fine.
  const enqueue = (obj: unknown): void => void obj;
  pods.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue });
  // filteringResourceEventHandler's filter reads the same read-only objects.
  const handler: ResourceEventHandler<Pod> = filteringResourceEventHandler<Pod>((p) => p.metadata?.namespace === 'default', {
    onAdd: (p) => void p.metadata?.name,
  });
  pods.addEventHandler(handler);
}

export function listersAndHandlersAgree(pods: SharedIndexInformer<Pod>): void {
  const fromLister = pods.lister().get('web-0');
  const fromNamespace = pods.lister().namespace('default').list()[0];
  expectTypeOf(fromLister).toEqualTypeOf<DeepReadonly<Pod> | undefined>();
  expectTypeOf(fromNamespace).toEqualTypeOf<DeepReadonly<Pod>>();
  pods.addEventHandler({ onAdd: (pod) => void expectTypeOf(pod).toEqualTypeOf(fromNamespace) });
  // @ts-expect-error -- a lister's object is read-only
  fromNamespace.metadata = {};
}

export function deepCopyGivesAMutableObject(pod: DeepReadonly<Pod>): Pod {
  // structuredClone keeps the read-only type: that was the cast the old "copy first" advice needed.
  const cloned = structuredClone(pod);
  // @ts-expect-error -- still read-only
  cloned.metadata = {};

  // With a type argument, the copy is exactly T.
  const copy = deepCopy<Pod>(pod);
  expectTypeOf(copy).toEqualTypeOf<Pod>();
  copy.metadata = { ...copy.metadata, labels: { ...copy.metadata?.labels, seen: 'yes' } };
  copy.spec?.containers.push({ name: 'sidecar' });

  // Without one, it is mutable all the way down, and assignable to T.
  const inferred = deepCopy(pod);
  inferred.metadata!.name = 'renamed';
  inferred.spec!.containers.push({ name: 'sidecar' });
  const asPod: Pod = inferred;
  return asPod;
}

/** Code that only reads takes `DeepReadonly<T>`: it accepts the cache's objects and plain ones alike. */
function describePod(pod: DeepReadonly<Pod>): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name} ${pod.spec?.containers.map((c) => c.image).join(',')}`;
}

/** Code typed for a plain, mutable `Pod`. */
function plainPodReader(pod: Pod): string {
  return pod.metadata?.name ?? '';
}

export function readersAcceptBoth(pods: SharedIndexInformer<Pod>, mine: Pod): void {
  const cached = pods.lister().get('web-0')!;
  describePod(cached);
  describePod(mine);
  pods.addEventHandler({ onAdd: (pod) => void describePod(pod) });
  // @ts-expect-error -- a read-only object does not go where a mutable Pod is expected (that code could write to it)
  plainPodReader(cached);
  plainPodReader(deepCopy<Pod>(cached)); // a copy does
}

export function wireTypesFitTheLibrarysKubeObject(pod: Pod, deployment: DeepReadonly<Deployment>): void {
  // Every kubernetes-types object is a KubeObject (the fake server's create/update take those).
  const asObject: KubeObject = pod;
  const asReadOnly: DeepReadonly<KubeObject> = deployment;
  void asObject;
  void asReadOnly;
}

/** The descriptors' kinds and groups agree with their types' literal `kind` and `apiVersion`. */
type Resources = typeof resources;
type ApiVersion<D extends GroupVersionResource> = D['group'] extends '' ? D['version'] : `${D['group']}/${D['version']}`;
type KindMismatches = {
  [N in keyof Resources]: NonNullable<ObjectOf<Resources[N]>['kind']> extends Resources[N]['kind']
    ? NonNullable<ObjectOf<Resources[N]>['apiVersion']> extends ApiVersion<Resources[N]>
      ? never
      : N
    : N;
}[keyof Resources];
expectTypeOf<KindMismatches>().toBeNever();
