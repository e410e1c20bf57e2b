// kube-informer/objects: helpers over Kubernetes objects and the API's answers — error tests, owner references, conditions, managed fields.

export { apiStatusOf, isNotFound, isConflict, isAlreadyExists, isInvalid, isForbidden, isGone, isTooManyRequests } from './core/index.js';
export type { ApiStatusInfo } from './core/index.js';
export { ApplyConflictError, MAX_FIELD_MANAGER_LENGTH } from './listwatch/index.js';
export type { ApplyConflict } from './listwatch/index.js';
export { setControllerReference, setOwnerReference, removeOwnerReference, hasOwnerReference, getControllerOf, AlreadyOwnedError } from './core/index.js';
export type { OwnerReference, OwnerLike, OwnedLike, OwnerReferenceOptions } from './core/index.js';
export { setCondition, findCondition, isConditionTrue, isConditionFalse, removeCondition, metaTimestamp } from './core/index.js';
export type { Condition, ConditionInput, SetConditionOptions, SetConditionResult, RemoveConditionResult } from './core/index.js';
export { extract, formatFieldPath } from './core/index.js';
export type { ApplyConfiguration, ApplyIdentity, ApplyMetadata, DeepPartial, FieldsV1, ManagedFieldsEntry, ExtractOptions } from './core/index.js';
