// What a controller needs from the API server: its informers' reads (for, owns, watches), what its builder's `uses` declares, and the local check of `ctx.client`'s requests against them.

import type { Logger } from '../core/log.js';
import { InvalidOptionError } from '../core/options.js';
import { hasPermissions, isCovered, isVerb, mergePermissions, PermissionNotDeclaredError, describeRule, sortVerbs, type Permission, type PermissionUse, type Verb } from '../core/permissions.js';
import { resources, type ResourceDescriptor } from '../core/resources.js';
import { misuse } from './outcomes.js';
import { gvrKey } from '../informer/factory.js';
import type { ShardRing } from '../sharding/ring.js';
import type { SourceRole } from './sharded.js';
import { sourceCaches } from './namespaced.js';
import type { WatchSpec } from './sources.js';

/** Options of `ControllerBuilder.uses`. */
export interface UsesOptions {
  /** The subresource the verbs are for (`status`, `scale`). Default: the resource itself. */
  subresource?: string;
  /**
   * The namespace the requests go to. Default: the factory's `namespace` (every namespace when the
   * factory has none); ignored for a cluster-scoped resource.
   */
  namespace?: string;
}

/** One `uses` declaration of a builder. */
export interface DeclaredUse {
  readonly resource: ResourceDescriptor<unknown>;
  readonly verbs: readonly Verb[];
  readonly subresource?: string;
  readonly namespace?: string;
}

/** Checks the arguments of `ControllerBuilder.uses` and returns the declaration. */
export function checkUses(resource: ResourceDescriptor<unknown>, verbs: unknown, options: UsesOptions): DeclaredUse {
  if (!Array.isArray(verbs) || verbs.length === 0 || !verbs.every(isVerb)) {
    throw new InvalidOptionError(
      `ControllerBuilder.uses(${gvrKey(resource)}): verbs must be a non-empty array of get, list, watch, create, update, patch, delete, deletecollection, got ${JSON.stringify(verbs)}`,
    );
  }
  const sub = options.subresource;
  if (sub !== undefined && (sub === '' || sub.includes('/'))) throw new InvalidOptionError(`ControllerBuilder.uses(${gvrKey(resource)}): option subresource must be one path segment (status, scale), got ${JSON.stringify(sub)}`);
  return { resource, verbs: sortVerbs(verbs), subresource: sub, namespace: options.namespace === '' ? undefined : options.namespace };
}

/** The `.uses(...)` line that would declare `use` (what a refusal tells the user to add). */
function usesLine(resource: ResourceDescriptor<unknown>, use: PermissionUse, defaultNamespace: string | undefined): string {
  const options: string[] = [];
  if (use.subresource !== undefined) options.push(`subresource: '${use.subresource}'`);
  if (resource.namespaced && defaultNamespace !== undefined && use.namespace !== undefined && use.namespace !== defaultNamespace) options.push(`namespace: '${use.namespace}'`);
  const builtIn = (resources as unknown as Record<string, ResourceDescriptor<unknown> | undefined>)[resource.resource];
  const what = builtIn !== undefined && builtIn.group === resource.group ? `resources.${resource.resource}` : `<the ${resource.kind} descriptor>`;
  return `.uses(${what}, ['${use.verb}']${options.length === 0 ? '' : `, { ${options.join(', ')} }`})`;
}

/** What builds a {@link ControllerPermissions}: the controller's name, its sources and declarations, where its factory lists. */
export interface ControllerPermissionSpec {
  readonly name: string;
  /** Each watched resource; `cache.namespaces`, when given, are where its informer lists (instead of `namespace`). */
  readonly sources: ReadonlyArray<{ readonly role: SourceRole; readonly resource: ResourceDescriptor<unknown>; readonly cache?: { readonly namespaces?: readonly string[] } }>;
  readonly uses: readonly DeclaredUse[];
  /** The factory's namespace; undefined = every namespace. */
  readonly namespace: string | undefined;
  readonly ring: ShardRing | undefined;
  readonly log: Logger;
  /** The reads of the sources cached per namespace of a namespace set (which changes while running). */
  readonly setReads?: () => Permission[];
}

/**
 * A controller's permissions and the check of its reconciles' requests. The rule: once the builder
 * declared anything with `uses`, a request of `ctx.client` that neither the informers' reads nor a
 * declaration covers is refused before it is sent (`PERMISSION_NOT_DECLARED`, a programming error
 * that stops the controller). A controller that declares nothing is not checked — its writes cannot
 * be known — but the first request of each kind is logged as a warning naming the `.uses` line, and
 * `kube-informer rbac` warns about the controller.
 */
export class ControllerPermissions {
  readonly #spec: ControllerPermissionSpec;
  readonly #all: Permission[];
  readonly #warned = new Set<string>();

  constructor(spec: ControllerPermissionSpec) {
    this.#spec = spec;
    const reads: Permission[] = spec.sources.flatMap((s) =>
      (s.cache?.namespaces ?? [spec.namespace]).map((namespace) => scoped(s.resource, namespace, { verbs: ['list', 'watch'], reason: `informer of ${gvrKey(s.resource)} (${s.role}) of controller ${spec.name}` })),
    );
    const uses: Permission[] = spec.uses.map((u) => {
      const p = scoped(u.resource, u.namespace ?? spec.namespace, { verbs: u.verbs, reason: `ctx.client of controller ${spec.name} (uses)` });
      if (u.subresource !== undefined) p.subresource = u.subresource;
      return p;
    });
    const ring = spec.ring !== undefined && hasPermissions(spec.ring) ? spec.ring.permissions() : [];
    this.#all = mergePermissions([...reads, ...uses, ...ring]);
  }

  /** Whether the builder declared any `uses` (the check is on). */
  get declared(): boolean {
    return this.#spec.uses.length > 0;
  }

  /** Every permission, merged. */
  permissions(): Permission[] {
    const setReads = this.#spec.setReads?.() ?? [];
    return setReads.length === 0 ? this.#all.map((p) => ({ ...p })) : mergePermissions([...this.#all, ...setReads]);
  }

  /**
   * Checks one request of `ctx.client(resource)`: throws {@link PermissionNotDeclaredError} when the
   * controller declared uses and none covers it; warns once per kind of request when it declared none.
   */
  check(resource: ResourceDescriptor<unknown>, verb: Verb, subresource: string | undefined, namespace: string | undefined, name: string | undefined): void {
    const use: PermissionUse = { verb, group: resource.group, resource: resource.resource };
    if (subresource !== undefined) use.subresource = subresource;
    if (resource.namespaced && namespace !== undefined && namespace !== '') use.namespace = namespace;
    if (name !== undefined && name !== '') use.name = name;
    // A namespaced object without a namespace: the client refuses it (INVALID_OPTION) with the better message.
    if (resource.namespaced && use.namespace === undefined && verb !== 'list') return;
    if (isCovered(this.#all, use) || isCovered(this.#spec.setReads?.() ?? [], use)) return;
    const rule = describeRule(use);
    const line = usesLine(resource, use, this.#spec.namespace);
    const controller = `controller ${this.#spec.name}`;
    const what = `ctx.client(${gvrKey(resource)}) ${verb}${subresource === undefined ? '' : ` of ${subresource}`}${use.namespace === undefined ? '' : ` in namespace ${use.namespace}`}`;
    if (this.declared) {
      throw misuse(new PermissionNotDeclaredError(`${controller}: ${what} is not declared: it needs ${rule}; add ${line} to the builder (refused before sending)`, use));
    }
    const key = `${use.group}/${use.resource}/${subresource ?? ''}/${verb}/${use.namespace ?? ''}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#spec.log.warn(
      `${controller}: ${what} is not declared (it needs ${rule}): this controller declares no uses, so nothing is refused, but kube-informer rbac cannot grant it — add ${line} to the builder`,
    );
  }
}

/**
 * What a `Controller` of a builder's description would report from `permissions()` on a factory of
 * `namespace` (undefined: every namespace), without building one: its sources cached as the controller
 * would cache them (option `namespaces` followed), its `uses`, and — with `withRing` — its ring's
 * Leases. A fleet's `MultiClusterController` reports each target cluster's rules with it, without the
 * ring (its Leases are where the ring's store points, not in every target). Throws `INVALID_OPTION` as
 * the `Controller` would (option `namespaces` with a factory namespace).
 */
export function describedPermissions(
  name: string,
  described: { readonly sources: readonly WatchSpec[]; readonly uses: readonly DeclaredUse[]; readonly options: { readonly namespaces?: readonly string[]; readonly sharded?: ShardRing } },
  namespace: string | undefined,
  log: Logger,
  withRing: boolean,
): Permission[] {
  const cacheOf = sourceCaches(name, described.options.namespaces, described.options.sharded, namespace);
  const sources = described.sources.map((s) => ({ ...s, cache: cacheOf(s) }));
  return new ControllerPermissions({ name, sources, uses: described.uses, namespace, ring: withRing ? described.options.sharded : undefined, log }).permissions();
}

function scoped(resource: ResourceDescriptor<unknown>, namespace: string | undefined, p: Pick<Permission, 'verbs' | 'reason'>): Permission {
  const out: Permission = { group: resource.group, resource: resource.resource, verbs: p.verbs, reason: p.reason };
  if (resource.namespaced && namespace !== undefined) out.namespace = namespace;
  return out;
}
