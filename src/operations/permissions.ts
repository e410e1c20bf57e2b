// What a Manager's process needs from the API server: its informers, controllers, runnables, leader election, webhook configurations and CRDs — and what cannot be known.

import { hasPermissions, mergePermissions, type Permission } from '../core/permissions.js';
import { resources } from '../core/resources.js';
import type { SharedInformerFactory } from '../informer/factory.js';
import type { Runnable } from '../runtime/run-group.js';
import { followPermissions } from './follow-crds.js';

/** The parts of a Manager's options that need permissions (`ManagerOptions` has them all). */
export interface PermissionParts {
  readonly crds?: ReadonlyArray<object>;
  readonly controllers?: readonly Runnable[];
  readonly runnables?: readonly Runnable[];
  readonly rings?: readonly unknown[];
  readonly leaderElection?: { readonly lock: { describe(): string } };
  readonly webhookServer?: unknown;
  readonly followCustomResources?: boolean;
}

/** What a {@link Manager}'s process needs, and what it cannot say (see `Manager.permissionReport`). */
export interface PermissionReport {
  /** Every permission, merged (see `mergePermissions`), each with its reasons. */
  readonly permissions: Permission[];
  /**
   * What the permissions cannot cover, one sentence each: a controller that declares no `uses` (its
   * writes are unknown), a runnable, lock or webhook server without `permissions()`. Empty when the
   * rules are complete.
   */
  readonly warnings: string[];
}

/** The part of a controller this file reads: a `Controller` says whether its builder declared `uses`. */
interface MaybeController {
  readonly name: string;
  readonly declaresUses?: unknown;
}

/** The CRD names a Manager installs (`crds`). */
function crdNames(options: PermissionParts): string[] {
  return (options.crds ?? []).map((c) => (('crd' in c ? c.crd : c) as { metadata?: { name?: string } }).metadata?.name ?? '').filter((n) => n !== '');
}

/** Each part's permissions, or a warning that it has none to give. */
function collect(what: string, part: unknown, out: Permission[], warnings: string[]): void {
  if (hasPermissions(part)) out.push(...part.permissions());
  else warnings.push(`${what} has no permissions(): what it sends to the API server is not in the rules — grant it by hand`);
}

/**
 * The {@link PermissionReport} of a Manager of `factory` with `options`: the factory's informers (`list`,
 * `watch`), each controller's permissions (its informers and its `uses`), each runnable's and shard
 * ring's, the leader-election lock's, the webhook server's (its configurations) and the CRDs' it
 * installs (`get`, `create` and `patch` by name: a server-side apply that creates is authorized as a create).
 */
export function managerPermissionReport(factory: SharedInformerFactory, options: PermissionParts): PermissionReport {
  const out: Permission[] = [...factory.permissions()];
  const warnings: string[] = [];
  for (const controller of (options.controllers ?? []) as ReadonlyArray<Runnable & MaybeController>) {
    collect(`controller ${controller.name}`, controller, out, warnings);
    if (controller.declaresUses === false) {
      warnings.push(
        `controller ${controller.name} declares no uses: what its reconcile does through ctx.client (beyond listing what it watches) is not in the rules and is not checked — declare it with .uses(resource, verbs) on its builder`,
      );
    }
  }
  for (const runnable of options.runnables ?? []) collect(`runnable ${runnable.name}`, runnable, out, warnings);
  for (const ring of options.rings ?? []) if (hasPermissions(ring)) out.push(...ring.permissions());
  const lock = options.leaderElection?.lock;
  if (lock !== undefined) collect(`leader election lock ${lock.describe()}`, lock, out, warnings);
  if (options.webhookServer !== undefined) collect('the webhook server', options.webhookServer, out, warnings);
  if (options.followCustomResources === true) out.push(...followPermissions(factory));
  const names = crdNames(options);
  if (names.length > 0) {
    const crd = resources.customresourcedefinitions;
    out.push({ group: crd.group, resource: crd.resource, verbs: ['get', 'create', 'patch'], resourceNames: names, reason: 'Manager crds: installed by server-side apply, then read until Established' });
  }
  return { permissions: mergePermissions(out), warnings };
}
