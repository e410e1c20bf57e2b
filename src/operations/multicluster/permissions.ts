// A fleet's RBAC is two documents: what each TARGET cluster grants the credentials of its kubeconfig (the
// controllers' reads and uses) and what the MANAGEMENT cluster grants the process (the providers' Secrets).

import { InvalidOptionError, validateOptions } from '../../core/options.js';
import { mergePermissions, type Permission } from '../../core/permissions.js';
import type { PermissionReport } from '../permissions.js';
import { objectRingOf, type ClusterAware } from './controller.js';
import type { ClusterProvider } from './provider.js';

/** Which cluster of a fleet a permission report is for (see `MultiClusterManager.permissionReport`). */
export type FleetCluster = 'management' | 'target';

/** Options of `MultiClusterManager.permissionReport`. */
export interface FleetPermissionOptions {
  /**
   * `'target'`: what every engaged cluster must grant the credentials in its kubeconfig (the
   * controllers' permissions); `'management'`: what the cluster the providers read must grant the
   * process (their Secrets, a shard ring's Leases). Required: the two are applied to different clusters.
   */
  cluster: FleetCluster;
}

/** A cluster-aware component as this file reads it: a `MultiClusterController` has both. */
interface MaybePermissions {
  permissions?(options?: { namespace?: string }): Permission[];
  readonly declaresUses?: unknown;
}

/**
 * The report of a fleet of `providers` and `controllers` whose clusters' factories list in `namespace`
 * (undefined: every namespace) for `options.cluster`; throws `INVALID_OPTION` for any other cluster.
 */
export function fleetPermissionReport(
  owner: string,
  options: FleetPermissionOptions,
  providers: readonly ClusterProvider[],
  controllers: readonly ClusterAware[],
  namespace: string | undefined,
): PermissionReport {
  validateOptions(`${owner}.permissionReport`, options, { cluster: 'string' });
  const cluster = (options as Partial<FleetPermissionOptions> | undefined)?.cluster;
  if (cluster !== 'management' && cluster !== 'target') {
    throw new InvalidOptionError(`${owner}.permissionReport: option cluster must be 'management' or 'target', got ${JSON.stringify(cluster) ?? 'undefined'}`);
  }
  const out: Permission[] = [];
  const warnings: string[] = [];
  if (cluster === 'management') {
    for (const p of providers) {
      if (typeof p.permissions === 'function') out.push(...p.permissions());
      else warnings.push(`provider ${p.name} has no permissions(): what it reads from the management cluster is not in the rules — grant it by hand`);
    }
    // A controller's shard ring (option sharded) keeps its Leases where its store points: the management cluster, as docs/multicluster.md sets it up.
    for (const c of controllers) {
      const ring = objectRingOf(c);
      if (ring !== undefined) out.push(...ring.permissions());
    }
    return { permissions: mergePermissions(out), warnings };
  }
  for (const c of controllers as ReadonlyArray<ClusterAware & MaybePermissions>) {
    if (typeof c.permissions !== 'function') {
      warnings.push(`controller ${c.name} has no permissions(): what it sends to each target cluster is not in the rules — grant it by hand`);
      continue;
    }
    out.push(...c.permissions(namespace === undefined ? {} : { namespace }));
    if (c.declaresUses === false) {
      warnings.push(
        `controller ${c.name} declares no uses: what its reconcile does through ctx.client (beyond listing what it watches) is not in the rules and is not checked — declare it with .uses(resource, verbs) on its builder`,
      );
    }
  }
  return { permissions: mergePermissions(out), warnings };
}
