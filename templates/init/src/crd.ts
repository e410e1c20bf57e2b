// The {{Kind}} custom resource, defined once: its object type, its descriptor and its CustomResourceDefinition come from one TypeBox schema.

// @if conversion
import type { ObjectOf } from 'kube-informer';
// @end
import { Type, defineCustomResource, type ObjectOfDefinition, type Static } from 'kube-informer/crd';

/** What the operator reports: the generation it acted on and a `Ready` condition. */
const Status = Type.Object({
  /** The `metadata.generation` this status describes. */
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  /** One condition per type (a map list keyed by `type`, as `metav1.Condition`s are). */
  conditions: Type.Optional(
    Type.Array(
      Type.Object({
        type: Type.String(),
        status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
        reason: Type.String(),
        message: Type.String(),
        observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
        lastTransitionTime: Type.String({ format: 'date-time' }),
      }),
      { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
    ),
  ),
});

/** The {{Kind}} resource: `{{plural}}.{{group}}`, namespaced, with the status subresource. */
export const {{plural}} = defineCustomResource({
  group: '{{group}}',
  names: { kind: '{{Kind}}' },
  versions: {
    v1: {
      storage: true,
      spec: Type.Object({
        /** What the operator writes into the {{Kind}}'s ConfigMap. */
        message: Type.String({ minLength: 1, maxLength: 1024 }),
      }),
      status: Status,
      subresources: { status: true },
    },
// @if conversion
    v1alpha1: {
      // The older shape: the same text under another name. The conversion webhook maps it to v1 and back.
      spec: Type.Object({ text: Type.String({ minLength: 1, maxLength: 1024 }) }),
      status: Status,
      subresources: { status: true },
    },
// @end
  },
});

/** A {{Kind}} at v1 (the stored version), as the API server sends it. */
export type {{Kind}} = ObjectOfDefinition<typeof {{plural}}>;
// @if conversion
/** A {{Kind}} at v1alpha1. */
export type {{Kind}}V1alpha1 = ObjectOf<typeof {{plural}}.descriptors.v1alpha1>;
// @end
/** What the operator reports. */
export type {{Kind}}Status = Static<typeof Status>;
