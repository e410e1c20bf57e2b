// RBAC objects from permissions: a Role and RoleBinding per namespace, a ClusterRole and ClusterRoleBinding for what spans namespaces, an optional ServiceAccount.

import type { ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import { minimalPermissions, ruleResource, type Permission } from '../core/permissions.js';

/** Options of {@link rbacManifests}. */
export interface RbacManifestOptions {
  /** The name of the Roles, the ClusterRole and their bindings. Required. */
  name: string;
  /** The namespace of the ServiceAccount the bindings name (where the process runs). Required. */
  namespace: string;
  /** The ServiceAccount the bindings name. Default: `name`. */
  serviceAccountName?: string;
  /** Put the ServiceAccount itself first in the list. Default `false` (it is made elsewhere). */
  serviceAccount?: boolean;
}

/** One object {@link rbacManifests} makes. */
export type RbacObject = ServiceAccount | ClusterRole | ClusterRoleBinding | Role | RoleBinding;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function checkName(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 253 || !DNS_SUBDOMAIN.test(value)) {
    throw new InvalidOptionError(`rbacManifests: option ${option} must be a DNS subdomain name (lower-case letters, digits, '-' and '.'), got ${describeValue(value)}`);
  }
  return value;
}

function rule(p: Permission): PolicyRule {
  const r: PolicyRule = { apiGroups: [p.group], resources: [ruleResource(p.resource, p.subresource)], verbs: [...p.verbs] };
  if (p.resourceNames !== undefined) r.resourceNames = [...p.resourceNames];
  return r;
}

/**
 * The permissions each RBAC object of {@link rbacManifests} grants, one rule each, in its order: those
 * of every namespace (the ClusterRole), then each namespace's (its Role), by namespace name.
 */
export function rbacScopes(permissions: readonly Permission[]): { cluster: Permission[]; namespaces: Array<[string, Permission[]]> } {
  const minimal = minimalPermissions(permissions);
  const names = [...new Set(minimal.flatMap((p) => (p.namespace === undefined ? [] : [p.namespace])))].sort();
  return { cluster: minimal.filter((p) => p.namespace === undefined), namespaces: names.map((ns) => [ns, minimal.filter((p) => p.namespace === ns)]) };
}

/**
 * The RBAC objects that grant `permissions` (from `Manager.permissions()`) to one ServiceAccount, and
 * nothing more: a `Role` and a `RoleBinding` in each namespace some permission is limited to, and a
 * `ClusterRole` and `ClusterRoleBinding` for the permissions of every namespace (an informer over all
 * namespaces) or of cluster-scoped resources (CRDs, webhook configurations). One rule per permission,
 * its verbs exactly as used; a verb a wider rule grants already is left out, so every rule is needed.
 * The order is stable: the ServiceAccount (with `serviceAccount`), the ClusterRole and its binding,
 * then each namespace's Role and binding by namespace name. Throws `INVALID_OPTION` for a name that is
 * not a DNS subdomain.
 *
 * @example
 * ```ts
 * const objects = rbacManifests(manager.permissions(), { name: 'widget-operator', namespace: 'widgets' });
 * ```
 */
export function rbacManifests(permissions: readonly Permission[], options: RbacManifestOptions): RbacObject[] {
  validateOptions('rbacManifests', options, { name: 'string', namespace: 'string', serviceAccountName: 'string', serviceAccount: 'boolean' });
  const name = checkName('name', options.name);
  const namespace = checkName('namespace', options.namespace);
  const serviceAccountName = checkName('serviceAccountName', options.serviceAccountName ?? name);
  const subjects = [{ kind: 'ServiceAccount', name: serviceAccountName, namespace }];
  const out: RbacObject[] = [];
  if (options.serviceAccount === true) out.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccountName, namespace } });
  const { cluster, namespaces } = rbacScopes(permissions);
  if (cluster.length > 0) {
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: cluster.map(rule) });
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects });
  }
  for (const [ns, granted] of namespaces) {
    const rules = granted.map(rule);
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns }, rules });
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects });
  }
  return out;
}
