// Owner references with controller-runtime's controllerutil semantics: one controller, same namespace, refused before any request.

import { ErrorCodes, KubeInformerError } from './errors.js';
import { InvalidOptionError, validateOptions } from './options.js';

/** An owner reference (meta/v1 `OwnerReference`), as `metadata.ownerReferences` holds it. */
export interface OwnerReference {
  /** The owner's API version (`apps/v1`). */
  apiVersion: string;
  /** The owner's kind (`Deployment`). */
  kind: string;
  /** The owner's name. */
  name: string;
  /** The owner's uid: a new object of the same name is another owner. */
  uid: string;
  /** True on the one reference to the managing controller. */
  controller?: boolean;
  /** True when the owner cannot be deleted (foreground) before this dependent is. */
  blockOwnerDeletion?: boolean;
}

/** What an owner must carry: its type and identity (objects from the cache and from the API server have them). */
export interface OwnerLike {
  /** The owner's API version. */
  readonly apiVersion?: string;
  /** The owner's kind. */
  readonly kind?: string;
  /** The owner's name, uid and (when namespaced) namespace. */
  readonly metadata?: {
    /** The owner's name. */
    readonly name?: string;
    /** The owner's uid. */
    readonly uid?: string;
    /** The owner's namespace; absent for a cluster-scoped owner. */
    readonly namespace?: string;
  };
}

/** What a dependent must carry: metadata whose `ownerReferences` are set in place. */
export interface OwnedLike {
  /** The dependent's metadata; created when absent. */
  metadata?: {
    /** The dependent's namespace; absent for a cluster-scoped object. */
    namespace?: string;
    /** Its owner references, set in place. */
    ownerReferences?: OwnerReference[];
    /** The dependent's name (for messages). */
    name?: string;
  };
}

/** Options of {@link setOwnerReference} and {@link setControllerReference}. */
export interface OwnerReferenceOptions {
  /** `blockOwnerDeletion` of the reference. Default true for a controller reference, unset otherwise. */
  blockOwnerDeletion?: boolean;
}

/**
 * `setControllerReference` found the object already controlled by another owner (code
 * `ALREADY_OWNED`; controller-runtime's `AlreadyOwnedError`). Two controllers must never manage one
 * object: leave it alone (say so in your status), or have its owner release it first.
 */
export class AlreadyOwnedError extends KubeInformerError {
  /** The controller reference the object already has. */
  readonly existing: OwnerReference;
  /** `message` names the object and its controller. */
  constructor(message: string, existing: OwnerReference) {
    super(ErrorCodes.ALREADY_OWNED, message);
    this.existing = existing;
  }
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** The same owner: same group (any version), kind and name — controller-runtime's `referSameObject`. */
function sameOwner(a: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name'>, b: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name'>): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function describe(obj: OwnerLike | OwnedLike): string {
  const m = obj.metadata;
  return `${m?.namespace ? `${m.namespace}/` : ''}${m?.name ?? '<no name>'}`;
}

/** The reference to `owner`, checked: type and identity present, namespaces compatible. */
function referenceTo(what: string, owner: OwnerLike, child: OwnedLike): OwnerReference {
  const m = owner.metadata;
  const missing = [
    typeof owner.apiVersion === 'string' && owner.apiVersion !== '' ? undefined : 'apiVersion',
    typeof owner.kind === 'string' && owner.kind !== '' ? undefined : 'kind',
    typeof m?.name === 'string' && m.name !== '' ? undefined : 'metadata.name',
    typeof m?.uid === 'string' && m.uid !== '' ? undefined : 'metadata.uid',
  ].filter((x) => x !== undefined);
  if (missing.length > 0) {
    throw new InvalidOptionError(`${what}: the owner ${describe(owner)} needs ${missing.join(', ')} (use the object as the API server or the cache returned it)`);
  }
  const ownerNs = m?.namespace ?? '';
  const childNs = child.metadata?.namespace ?? '';
  if (ownerNs !== '' && childNs === '') {
    throw new InvalidOptionError(`${what}: ${describe(child)} is cluster-scoped (no namespace) and cannot have the namespaced owner ${owner.kind} ${describe(owner)}; a cluster-scoped object can only be owned by a cluster-scoped one`);
  }
  if (ownerNs !== '' && ownerNs !== childNs) {
    throw new InvalidOptionError(`${what}: cross-namespace owner references are not allowed: the owner ${owner.kind} ${describe(owner)} is in namespace ${ownerNs}, the object ${describe(child)} in ${childNs}`);
  }
  return { apiVersion: owner.apiVersion as string, kind: owner.kind as string, name: m?.name as string, uid: m?.uid as string };
}

function upsert(child: OwnedLike, ref: OwnerReference): void {
  child.metadata ??= {};
  const refs = [...(child.metadata.ownerReferences ?? [])];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i === -1) refs.push(ref);
  else refs[i] = ref;
  child.metadata.ownerReferences = refs;
}

/**
 * Makes `owner` the controller of `child` (controller-runtime's `SetControllerReference`): sets an
 * owner reference with `controller: true` and `blockOwnerDeletion: true` on `child.metadata`
 * (replacing a reference to the same owner — same group, kind and name), and returns `child`.
 * Throws {@link AlreadyOwnedError} when another owner already controls `child`, and `INVALID_OPTION`
 * — before any request — when the owner lacks apiVersion, kind, name or uid, is in another namespace
 * than `child`, or is namespaced while `child` is cluster-scoped (a namespaced child may have a
 * cluster-scoped owner; the reverse the garbage collector cannot resolve).
 */
export function setControllerReference<C extends OwnedLike>(owner: OwnerLike, child: C, options: OwnerReferenceOptions = {}): C {
  validateOptions('setControllerReference', options, { blockOwnerDeletion: 'boolean' });
  const ref: OwnerReference = { ...referenceTo('setControllerReference', owner, child), controller: true, blockOwnerDeletion: options.blockOwnerDeletion ?? true };
  const existing = getControllerOf(child);
  if (existing !== undefined && !sameOwner(existing, ref)) {
    throw new AlreadyOwnedError(
      `setControllerReference: ${describe(child)} is already controlled by ${existing.kind} ${existing.name} (${existing.apiVersion}); it cannot also be controlled by ${ref.kind} ${ref.name}`,
      { ...existing },
    );
  }
  upsert(child, ref);
  return child;
}

/**
 * Adds `owner` to `child`'s owner references without making it the controller (controller-runtime's
 * `SetOwnerReference`); a reference to the same owner (same group, kind and name) is replaced.
 * Returns `child`. Throws `INVALID_OPTION` as {@link setControllerReference} does.
 */
export function setOwnerReference<C extends OwnedLike>(owner: OwnerLike, child: C, options: OwnerReferenceOptions = {}): C {
  validateOptions('setOwnerReference', options, { blockOwnerDeletion: 'boolean' });
  const ref = referenceTo('setOwnerReference', owner, child);
  if (options.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = options.blockOwnerDeletion;
  upsert(child, ref);
  return child;
}

/**
 * Removes the reference to `owner` (same group, kind and name) from `child`. Returns whether there
 * was one (controller-runtime's `RemoveOwnerReference` returns an error instead).
 */
export function removeOwnerReference(owner: OwnerLike, child: OwnedLike): boolean {
  const refs = child.metadata?.ownerReferences;
  if (refs === undefined || child.metadata === undefined) return false;
  const target = { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata?.name ?? '' };
  const kept = refs.filter((r) => !sameOwner(r, target));
  if (kept.length === refs.length) return false;
  child.metadata.ownerReferences = kept;
  return true;
}

/** True when `child` has a reference to `owner` (same group, kind and name); with `controller`, only a controller reference counts. */
export function hasOwnerReference(owner: OwnerLike, child: { readonly metadata?: { readonly ownerReferences?: readonly Readonly<OwnerReference>[] } }, controller = false): boolean {
  const target = { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata?.name ?? '' };
  return (child.metadata?.ownerReferences ?? []).some((r) => sameOwner(r, target) && (!controller || r.controller === true));
}

/** The controller reference of `obj` (the one with `controller: true`), or `undefined` (`metav1.GetControllerOf`). */
export function getControllerOf(obj: { readonly metadata?: { readonly ownerReferences?: readonly Readonly<OwnerReference>[] } }): OwnerReference | undefined {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  return ref === undefined ? undefined : { ...ref };
}
