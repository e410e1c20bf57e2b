// kube-informer/objects: helpers over Kubernetes objects and the API's answers — error tests, owner references, conditions, managed fields.

export { apiStatusOf, isNotFound, isConflict, isAlreadyExists, isInvalid, isForbidden, isGone, isTooManyRequests } from './core/api-errors.js';
export type { ApiStatusInfo } from './core/api-errors.js';
export { ApplyConflictError, MAX_FIELD_MANAGER_LENGTH } from './listwatch/apply.js';
export type { ApplyConflict } from './listwatch/apply.js';
export { setControllerReference, setOwnerReference, removeOwnerReference, hasOwnerReference, getControllerOf, AlreadyOwnedError } from './core/owner-references.js';
export type { OwnerReference, OwnerLike, OwnedLike, OwnerReferenceOptions } from './core/owner-references.js';
export { setCondition, findCondition, isConditionTrue, isConditionFalse, removeCondition, metaTimestamp } from './core/conditions.js';
export type { Condition, ConditionInput, SetConditionOptions, SetConditionResult, RemoveConditionResult } from './core/conditions.js';
export { extract, formatFieldPath } from './core/managed-fields.js';
export type { ApplyConfiguration, ApplyIdentity, ApplyMetadata, DeepPartial, FieldsV1, ManagedFieldsEntry, ExtractOptions } from './core/managed-fields.js';
