// Server-side apply on the client side: the checks made before sending, and the typed conflict error.

import { ApiStatusError } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { StatusDetails } from './client-types.js';

/** The longest field manager kube-apiserver accepts (`fieldManager: Too long: may not be more than 128 bytes`). */
export const MAX_FIELD_MANAGER_LENGTH = 128;

/**
 * The API groups kube-apiserver serves itself (strategic merge patch works on their types only); a
 * group not listed — `example.com`, `gateway.networking.k8s.io` — is a custom resource.
 */
const BUILT_IN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** True when `group` is one kube-apiserver serves itself (not a custom resource's). */
export function isBuiltInGroup(group: string): boolean {
  return BUILT_IN_GROUPS.has(group);
}

/** Refuses an empty field manager or one longer than the server allows, with `INVALID_OPTION` naming `owner`. */
export function checkFieldManager(owner: string, fieldManager: string): void {
  if (fieldManager === '' || Buffer.byteLength(fieldManager) > MAX_FIELD_MANAGER_LENGTH) {
    throw new InvalidOptionError(
      `${owner}: the field manager must be 1 to ${MAX_FIELD_MANAGER_LENGTH} bytes (the server refuses longer ones), got ${Buffer.byteLength(fieldManager)} bytes: ${JSON.stringify(fieldManager.slice(0, 40))}`,
    );
  }
}

/**
 * Checks an apply configuration's identity before sending: a JSON object with `apiVersion` and `kind`
 * matching `resource`, a `metadata.name`, and a `metadata.namespace` exactly when the resource is
 * namespaced. Returns the name and namespace. Throws `INVALID_OPTION` naming what is wrong.
 */
export function checkApplyConfiguration(owner: string, resource: ResourceDescriptor<unknown>, config: unknown): { name: string; namespace: string | undefined } {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new InvalidOptionError(`${owner}: an apply configuration must be an object, got ${config === null ? 'null' : typeof config}`);
  }
  const c = config as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const apiVersion = resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  const missing: string[] = [];
  if (typeof c.apiVersion !== 'string' || c.apiVersion === '') missing.push('apiVersion');
  if (typeof c.kind !== 'string' || c.kind === '') missing.push('kind');
  if (typeof c.metadata?.name !== 'string' || c.metadata.name === '') missing.push('metadata.name');
  if (resource.namespaced && (typeof c.metadata?.namespace !== 'string' || c.metadata.namespace === '')) missing.push('metadata.namespace');
  if (missing.length > 0) {
    throw new InvalidOptionError(`${owner}: the apply configuration needs ${missing.join(', ')} (an apply configuration names the object it applies to)`);
  }
  if (c.apiVersion !== apiVersion || c.kind !== resource.kind) {
    throw new InvalidOptionError(`${owner}: the apply configuration is a ${String(c.kind)} (${String(c.apiVersion)}) but this client writes ${resource.kind} (${apiVersion})`);
  }
  if (!resource.namespaced && c.metadata?.namespace !== undefined && c.metadata.namespace !== '') {
    throw new InvalidOptionError(`${owner}: ${resource.resource} are cluster-scoped; the apply configuration must not set metadata.namespace`);
  }
  return { name: c.metadata?.name as string, namespace: resource.namespaced ? (c.metadata?.namespace as string) : undefined };
}

/** One field another manager owns with another value, from a 409 apply conflict. */
export interface ApplyConflict {
  /** The manager that owns the field (`kubectl-client-side-apply`), as the server names it. */
  manager: string;
  /** The field path as the server writes it (`.data.key`, `.spec.containers[name="app"].image`). */
  field: string;
  /** The server's words for this conflict (`conflict with "kubectl" using v1`). */
  message: string;
}

/**
 * A server-side apply was refused because fields it sets are owned by other managers with other
 * values (HTTP 409, reason `Conflict`). `conflicts` lists each manager and field path from the
 * Status `details.causes`. Recovery: drop those fields from the configuration, apply with
 * `force: true` to take them over, or leave them to their owner. `isConflict` is true for it.
 */
export class ApplyConflictError extends ApiStatusError {
  /** Each conflicting field and the manager that owns it. */
  readonly conflicts: readonly ApplyConflict[];
  /** The field manager whose apply was refused. */
  readonly fieldManager: string;

  constructor(statusCode: number, message: string, conflicts: readonly ApplyConflict[], options: { reason?: string; status?: unknown; cause?: unknown; fieldManager?: string }) {
    super(statusCode, message, options);
    this.conflicts = conflicts;
    this.fieldManager = options.fieldManager ?? '';
  }
}

const MANAGER = /^conflicts? with "((?:[^"\\]|\\.)*)"/;

/**
 * Turns a 409 answer to an apply by `fieldManager` whose Status carries `FieldManagerConflict`
 * causes into an {@link ApplyConflictError}; any other error is returned as it is.
 */
export function applyConflictFromStatus(err: ApiStatusError, fieldManager = ''): ApiStatusError {
  if (err.statusCode !== 409) return err;
  const causes = (err.status as { details?: StatusDetails } | undefined)?.details?.causes;
  if (!Array.isArray(causes)) return err;
  const conflicts: ApplyConflict[] = [];
  for (const c of causes) {
    if (c.reason !== 'FieldManagerConflict') continue;
    const message = c.message ?? '';
    const m = MANAGER.exec(message);
    conflicts.push({ manager: m === null ? message : (JSON.parse(`"${m[1]}"`) as string), field: c.field ?? '', message });
  }
  if (conflicts.length === 0) return err;
  const listed = conflicts.map((c) => `${c.field} (owned by ${c.manager})`).join(', ');
  const message = `${err.message} — the apply by ${JSON.stringify(fieldManager)} conflicts on ${listed}`;
  return new ApplyConflictError(409, message, conflicts, { reason: err.reason, status: err.status, cause: err, fieldManager });
}
