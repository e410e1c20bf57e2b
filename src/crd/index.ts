// kube-informer/crd: custom resources defined once in TypeScript (TypeBox) — the CRD, the typed descriptor, the validator, the installer.
export { default as Type } from 'typebox';
export type { Static, TSchema } from 'typebox';
export { IntOrString, PreserveUnknownFields, EmbeddedResource, toStructural, type EmbeddedObject, type StructuralSchema, type ValidationRule } from './schema.js';
export {
  defineCustomResource,
  type CustomResource,
  type CustomResourceOptions,
  type CustomResourceNames,
  type CustomObject,
  type VersionOptions,
  type VersionObject,
  type StorageVersion,
  type ObjectOfDefinition,
  type PrinterColumn,
  type ScaleSubresource,
  type Subresources,
  type StorageFlag,
} from './define.js';
export { defaultPlural } from './plural.js';
export { validateObject, pruneObject, applyDefaults, type FieldError, type FieldErrorType, type ValidationResult } from './validate.js';
export {
  ensureCustomResourceDefinitions,
  waitForCustomResourceDefinitions,
  CustomResourceDefinitionError,
  type EnsureCustomResourceDefinitionsOptions,
  type WaitForCustomResourceDefinitionsOptions,
  type CustomResourceDefinitionTarget,
  type CrdSource,
  type CustomResourceDefinitionLike,
  type HasCustomResourceDefinition,
  type CustomResourceDefinitionClient,
} from './ensure.js';
export { readCustomResourceDefinitionFiles, CustomResourceDefinitionFileError } from './files.js';
export { crdTypes, type GeneratedTypes } from './types-gen.js';
