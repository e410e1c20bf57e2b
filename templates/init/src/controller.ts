// The {{Kind}} controller: one ConfigMap per {{Kind}} by server-side apply, a Ready condition in its status, and a finalizer that deletes the ConfigMap before the {{Kind}} goes.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Action, Controller, finalizer, predicates, type ControllerOptions, type ReconcileContext } from 'kube-informer/controller';
import { resources, SharedInformerFactory, type DeepReadonly } from 'kube-informer';
import { isNotFound, setCondition, setControllerReference, type ApplyConfiguration, type ApplyIdentity } from 'kube-informer/objects';
import { {{plural}}, type {{Kind}} } from './crd.js';

/** The finalizer on every {{Kind}}: the cleanup runs before the {{Kind}} may disappear. */
export const FINALIZER = '{{group}}/cleanup';

/** The ConfigMap a {{Kind}} owns: `<name>-{{singular}}`. */
export const configMapName = (owner: string): string => `${owner}-{{singular}}`;

/** The ConfigMap as the {{Kind}} wants it: a server-side apply configuration with a controller reference to the {{Kind}}. */
export function desiredConfigMap(owner: DeepReadonly<{{Kind}}>): ApplyConfiguration<ConfigMap> {
  const name = owner.metadata?.name ?? '';
  const configMap: ConfigMap & ApplyIdentity = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMapName(name), namespace: owner.metadata?.namespace, labels: { '{{group}}/{{singular}}': name } },
    data: { message: owner.spec.message },
  };
  // Objects of a list carry no apiVersion and kind: the owner's identity is written out.
  return setControllerReference({ apiVersion: '{{group}}/v1', kind: '{{Kind}}', metadata: owner.metadata }, configMap);
}

/** Makes the ConfigMap match the {{Kind}}, then reports it in the status (only when something changed). */
async function apply(owner: DeepReadonly<{{Kind}}>, ctx: ReconcileContext<{{Kind}}>): Promise<Action> {
  await ctx.client(resources.configmaps).apply(desiredConfigMap(owner), { force: true });
  const generation = owner.metadata?.generation;
  const { conditions, changed } = setCondition(owner.status?.conditions, {
    type: 'Ready',
    status: 'True',
    reason: 'ConfigMapWritten',
    message: `ConfigMap ${configMapName(ctx.name)} holds the message`,
    observedGeneration: generation,
  });
  if (changed || owner.status?.observedGeneration !== generation) {
    await ctx.client({{plural}}.descriptor).applyStatus(
      { apiVersion: '{{group}}/v1', kind: '{{Kind}}', metadata: { name: ctx.name, namespace: ctx.namespace }, status: { observedGeneration: generation, conditions } },
      { force: true },
    );
  }
  return Action.done();
}

/** The {{Kind}} is being deleted: delete its ConfigMap (a control plane without kube-controller-manager has no garbage collector). */
async function cleanup(ctx: ReconcileContext<{{Kind}}>): Promise<Action> {
  for (const child of ctx.children(resources.configmaps)) {
    await ctx.client(resources.configmaps)
      .delete(child.metadata?.name ?? '', ctx.namespace, { preconditions: { uid: child.metadata?.uid } })
      .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  }
  return Action.done();
}

/**
 * The {{Kind}} controller on a factory of its own: it reconciles a {{Kind}} when its spec changes and
 * when its ConfigMap changes. `.uses(...)` declares what the reconcile writes, beyond what the
 * informers read: a write outside it is refused before it reaches the API server, and
 * `npm run manifests` derives the RBAC rules from it.
 */
export function {{kindVar}}Controller(
  kubeConfig: KubeConfig,
  options: Pick<ControllerOptions, 'logger' | 'clock' | 'metricsProvider'> = {},
): { factory: SharedInformerFactory; controller: Controller<{{Kind}}> } {
  const factory = new SharedInformerFactory(kubeConfig, { logger: options.logger });
  const controller = Controller.for(factory, {{plural}}.descriptor, { predicates: [predicates.generationChanged] })
    .owns(resources.configmaps)
    .uses(resources.configmaps, ['create', 'patch', 'delete']) // apply (a PATCH that may create) and the cleanup's delete
    .uses({{plural}}.descriptor, ['patch']) // the finalizer, added and removed by JSON patch
    .uses({{plural}}.descriptor, ['patch'], { subresource: 'status' }) // applyStatus
    .build(
      (_key, ctx) =>
        finalizer(ctx.client({{plural}}.descriptor), FINALIZER, ctx, {
          apply: (owner) => apply(owner, ctx),
          cleanup: () => cleanup(ctx),
        }),
      { name: '{{plural}}', fieldManager: '{{name}}', ...options },
    );
  return { factory, controller };
}
