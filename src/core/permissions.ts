// The permission model: what a process needs from the API server (RBAC rules with their reasons), merged, and whether a request is covered.

import { ErrorCodes, KubeInformerError } from './errors.js';

/**
 * A verb as kube-apiserver's RBAC authorizer names it (the request's `RequestInfo.verb`): a GET of one
 * object is `get`, of a collection `list`, with `watch=true` `watch`; POST `create`; PUT `update`;
 * PATCH `patch` (server-side apply included); DELETE of one object `delete`, of a collection `deletecollection`.
 */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** Every {@link Verb}, in the fixed order merged permissions and generated rules list them. */
export const VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/**
 * One thing a process needs the API server to let it do: verbs on a resource (or one of its
 * subresources) of an API group, in one namespace or in every namespace, for some object names or all —
 * one RBAC rule, with the reason it is needed.
 */
export interface Permission {
  /** The API group, `''` for the core group. */
  group: string;
  /** The plural resource name (`configmaps`). */
  resource: string;
  /** A subresource (`status`, `scale`); absent for the resource itself. */
  subresource?: string;
  /** The verbs, each once (merged permissions list them in {@link VERBS} order). */
  verbs: readonly Verb[];
  /** The namespace the requests go to; `undefined` = every namespace (and cluster-scoped resources): a ClusterRole. */
  namespace?: string;
  /** Only these object names (RBAC `resourceNames`); absent = every name. */
  resourceNames?: readonly string[];
  /** Where the need comes from, for people: `"informer of configmaps (owns) of controller configmapsets"`. */
  reason: string;
}

/** Something that can say which {@link Permission}s it needs (a `Controller`, a `Manager`, an `EventRecorder`, ...). */
export interface HasPermissions {
  /** What it needs from the API server, with reasons. */
  permissions(): Permission[];
}

/** Whether `value` has a `permissions()` method (implements {@link HasPermissions}). */
export function hasPermissions(value: unknown): value is HasPermissions {
  return typeof value === 'object' && value !== null && typeof (value as { permissions?: unknown }).permissions === 'function';
}

/**
 * One request as kube-apiserver's authorizer sees it: a verb on a resource (or subresource) of a group,
 * in a namespace (absent: cluster-scoped, or across every namespace), of an object name (absent for a
 * collection, and for a POST).
 */
export interface PermissionUse {
  /** The request's verb. */
  verb: Verb;
  /** The API group, `''` for the core group. */
  group: string;
  /** The plural resource name. */
  resource: string;
  /** The subresource, if the request addressed one. */
  subresource?: string;
  /** The namespace of the request path; absent for a cluster-scoped resource or a request across every namespace. */
  namespace?: string;
  /** The object name of the request path; absent for a collection or a create by POST. */
  name?: string;
}

const verbRank = new Map(VERBS.map((v, i) => [v, i]));

/** Whether `value` is one of the {@link VERBS}. */
export function isVerb(value: unknown): value is Verb {
  return typeof value === 'string' && verbRank.has(value as Verb);
}

/** `verbs` each once, in {@link VERBS} order. */
export function sortVerbs(verbs: Iterable<Verb>): Verb[] {
  return [...new Set(verbs)].sort((a, b) => (verbRank.get(a) ?? 0) - (verbRank.get(b) ?? 0));
}

function scopeKey(p: Omit<Permission, 'verbs' | 'reason'>): string {
  const names = p.resourceNames === undefined ? '*' : [...new Set(p.resourceNames)].sort().join(',');
  return [p.namespace ?? '*', p.group, p.resource, p.subresource ?? '', names].join('\u0000');
}

/** The order of merged permissions: every namespace first, then by namespace, group, resource, subresource, names. */
function compare(a: Permission, b: Permission): number {
  const ka = [a.namespace === undefined ? '0' : `1${a.namespace}`, a.group, a.resource, a.subresource ?? '', (a.resourceNames ?? []).join(',')];
  const kb = [b.namespace === undefined ? '0' : `1${b.namespace}`, b.group, b.resource, b.subresource ?? '', (b.resourceNames ?? []).join(',')];
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

/**
 * Merges permissions: those of the same group, resource, subresource, namespace and resource names
 * become one, its verbs united (in {@link VERBS} order) and its reasons kept (joined with `; `, each
 * once). The result is in a stable order: every-namespace permissions first, then by namespace, group,
 * resource, subresource and names. Permissions without verbs are dropped.
 */
export function mergePermissions(permissions: Iterable<Permission>): Permission[] {
  const byKey = new Map<string, { p: Permission; verbs: Set<Verb>; reasons: string[] }>();
  for (const p of permissions) {
    if (p.verbs.length === 0) continue;
    const key = scopeKey(p);
    let entry = byKey.get(key);
    if (entry === undefined) {
      const base: Permission = { group: p.group, resource: p.resource, verbs: [], reason: '' };
      if (p.subresource !== undefined && p.subresource !== '') base.subresource = p.subresource;
      if (p.namespace !== undefined) base.namespace = p.namespace;
      if (p.resourceNames !== undefined) base.resourceNames = [...new Set(p.resourceNames)].sort();
      entry = { p: base, verbs: new Set(), reasons: [] };
      byKey.set(key, entry);
    }
    for (const v of p.verbs) entry.verbs.add(v);
    for (const r of p.reason.split('; ')) if (r !== '' && !entry.reasons.includes(r)) entry.reasons.push(r);
  }
  return [...byKey.values()].map((e) => ({ ...e.p, verbs: sortVerbs(e.verbs), reason: e.reasons.join('; ') })).sort(compare);
}

/** Whether `permission` allows every request `scope` allows (same resource; a namespace and names at least as wide). */
function widerOrEqual(permission: Permission, scope: Permission): boolean {
  if (permission.group !== scope.group || permission.resource !== scope.resource || (permission.subresource ?? '') !== (scope.subresource ?? '')) return false;
  if (permission.namespace !== undefined && permission.namespace !== scope.namespace) return false;
  if (permission.resourceNames === undefined) return true;
  return scope.resourceNames !== undefined && scope.resourceNames.every((n) => permission.resourceNames!.includes(n));
}

/**
 * {@link mergePermissions}, then each verb another permission already grants more widely is dropped (a
 * Role's `list` of configmaps beside a ClusterRole's; `get` of one named Lease beside `get` of every
 * Lease), and a permission left without verbs goes: every rule that remains is needed.
 */
export function minimalPermissions(permissions: Iterable<Permission>): Permission[] {
  const merged = mergePermissions(permissions);
  const out: Permission[] = [];
  for (const p of merged) {
    const wider = merged.filter((q) => q !== p && widerOrEqual(q, p));
    const verbs = p.verbs.filter((v) => !wider.some((q) => q.verbs.includes(v)));
    if (verbs.length > 0) out.push({ ...p, verbs });
  }
  return out;
}

/** Whether `permission` allows the request `use` (as kube-apiserver's RBAC authorizer decides it). */
export function permits(permission: Permission, use: PermissionUse): boolean {
  if (permission.group !== use.group || permission.resource !== use.resource) return false;
  if ((permission.subresource ?? '') !== (use.subresource ?? '')) return false;
  if (!permission.verbs.includes(use.verb)) return false;
  if (permission.namespace !== undefined && permission.namespace !== use.namespace) return false;
  if (permission.resourceNames !== undefined && (use.name === undefined || !permission.resourceNames.includes(use.name))) return false;
  return true;
}

/** Whether some permission of `permissions` allows the request `use`. */
export function isCovered(permissions: readonly Permission[], use: PermissionUse): boolean {
  return permissions.some((p) => permits(p, use));
}

/**
 * The uses of `used` that no permission of `permissions` allows, each once, in a stable order — what a
 * recording of a test run (`FakeApiServer.usedPermissions()`) needed that the static rules
 * (`Manager.permissions()`) miss. Empty when the static rules cover every request made.
 */
export function uncoveredUses(used: Iterable<PermissionUse>, permissions: readonly Permission[]): PermissionUse[] {
  const seen = new Map<string, PermissionUse>();
  for (const use of used) {
    if (isCovered(permissions, use)) continue;
    seen.set(useKey(use), use);
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, u]) => u);
}

/** A use as one line of text (its identity, for sorting and sets). */
export function useKey(use: PermissionUse): string {
  return [use.namespace ?? '', use.group, use.resource, use.subresource ?? '', use.name ?? '', use.verb].join('\u0000');
}

/** The RBAC `resources` entry of a resource and subresource: `configmaps`, `configmapsets/status`. */
export function ruleResource(resource: string, subresource: string | undefined): string {
  return subresource === undefined || subresource === '' ? resource : `${resource}/${subresource}`;
}

/**
 * The rule that allows `use`, in RBAC words: `apiGroups: [""], resources: ["configmaps"], verbs:
 * ["create"] in namespace demo` (or `cluster-wide` for a cluster-scoped resource or every namespace).
 */
export function describeRule(use: Omit<PermissionUse, 'name'> & { resourceNames?: readonly string[] }): string {
  const names = use.resourceNames === undefined ? '' : `, resourceNames: ${JSON.stringify(use.resourceNames)}`;
  const where = use.namespace === undefined ? 'cluster-wide (a ClusterRole)' : `in namespace ${use.namespace}`;
  return `apiGroups: [${JSON.stringify(use.group)}], resources: [${JSON.stringify(ruleResource(use.resource, use.subresource))}], verbs: [${JSON.stringify(use.verb)}]${names} ${where}`;
}

/**
 * A reconcile's request through `ctx.client` that its controller did not declare with
 * `ControllerBuilder.uses` (code `PERMISSION_NOT_DECLARED`): refused before anything was sent. The
 * message names the missing rule and the `.uses(...)` line that declares it.
 */
export class PermissionNotDeclaredError extends KubeInformerError {
  /** The request that was refused. */
  readonly use: PermissionUse;
  constructor(message: string, use: PermissionUse) {
    super(ErrorCodes.PERMISSION_NOT_DECLARED, message);
    this.use = use;
  }
}
