// The Backup operator of the operator guide (docs/operator-guide.md): a controller that owns one ConfigMap per Backup, reports a Ready condition and cleans up behind a finalizer.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Action, Controller, finalizer, predicates, type ControllerOptions, type ReconcileContext } from '../../src/controller.js';
import { resources, SharedInformerFactory, type DeepReadonly } from '../../src/index.js';
import { isNotFound, setCondition, setControllerReference, type ApplyConfiguration, type ApplyIdentity } from '../../src/objects.js';
import { backups, type Backup } from './crd.js';

/** The finalizer on every Backup: the cleanup runs before the Backup may disappear. */
export const FINALIZER = 'backup.example.com/cleanup';

/** The ConfigMap a Backup keeps its plan in: `<backup>-plan`. */
export const planName = (backup: string): string => `${backup}-plan`;

/** The plan as the Backup wants it: a server-side apply configuration with a controller reference to the Backup. */
export function desiredPlan(backup: DeepReadonly<Backup>): ApplyConfiguration<ConfigMap> {
  const name = backup.metadata?.name ?? '';
  const plan: ConfigMap & ApplyIdentity = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: planName(name), namespace: backup.metadata?.namespace, labels: { 'backup.example.com/backup': name } },
    data: { schedule: backup.spec.schedule, bucket: backup.spec.bucket, keep: String(backup.spec.keep ?? 7) },
  };
  // Objects of a list carry no apiVersion and kind: the owner's identity is written out.
  return setControllerReference({ apiVersion: 'backup.example.com/v1', kind: 'Backup', metadata: backup.metadata }, plan);
}

/** Makes the plan match the Backup, then reports it in the status. */
async function apply(backup: DeepReadonly<Backup>, ctx: ReconcileContext<Backup>): Promise<Action> {
  await ctx.client(resources.configmaps).apply(desiredPlan(backup), { force: true });
  const generation = backup.metadata?.generation;
  const { conditions, changed } = setCondition(backup.status?.conditions, {
    type: 'Ready',
    status: 'True',
    reason: 'PlanWritten',
    message: `ConfigMap ${planName(ctx.name)} holds the schedule`,
    observedGeneration: generation,
  });
  if (changed || backup.status?.observedGeneration !== generation) {
    await ctx.client(backups.descriptor).applyStatus(
      { apiVersion: 'backup.example.com/v1', kind: 'Backup', metadata: { name: ctx.name, namespace: ctx.namespace }, status: { observedGeneration: generation, conditions } },
      { force: true },
    );
  }
  return Action.done();
}

/** The Backup is being deleted: delete its plan (a cluster without kube-controller-manager has no garbage collector). */
async function cleanup(ctx: ReconcileContext<Backup>): Promise<Action> {
  for (const plan of ctx.children(resources.configmaps)) {
    await ctx.client(resources.configmaps)
      .delete(plan.metadata?.name ?? '', ctx.namespace, { preconditions: { uid: plan.metadata?.uid } })
      .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  }
  return Action.done();
}

/**
 * The Backup operator: an informer factory and the controller on it, which reconciles a Backup when its
 * spec changes (`generationChanged`; the finalizer's own changes pass anyway) and when its plan changes.
 * Start the factory and run the controller, or give both to a Manager.
 */
export function backupOperator(
  kubeConfig: KubeConfig,
  options: Pick<ControllerOptions, 'logger' | 'clock'> = {},
): { factory: SharedInformerFactory; controller: Controller<Backup> } {
  const factory = new SharedInformerFactory(kubeConfig);
  const controller = Controller.for(factory, backups.descriptor, { predicates: [predicates.generationChanged] })
    .owns(resources.configmaps)
    .uses(resources.configmaps, ['create', 'patch', 'delete']) // the plan: applied (an apply that creates is a create too), deleted
    .uses(backups.descriptor, ['patch']) // the finalizer
    .uses(backups.descriptor, ['patch'], { subresource: 'status' }) // the Ready condition, applied
    .build(
      (_key, ctx) =>
        finalizer(ctx.client(backups.descriptor), FINALIZER, ctx, {
          apply: (backup) => apply(backup, ctx),
          cleanup: () => cleanup(ctx),
        }),
      { name: 'backups', fieldManager: 'backup-operator', ...options },
    );
  return { factory, controller };
}
