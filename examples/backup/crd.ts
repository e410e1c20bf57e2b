// The Backup custom resource of the operator guide (docs/operator-guide.md), defined once: its types, descriptors and CRD come from one TypeBox schema.

import type { ObjectOf } from '../../src/index.js';
import { Type, defineCustomResource, type ObjectOfDefinition, type Static } from '../../src/crd/index.js';

/** What the operator reports (the same in both versions). */
const Status = Type.Object({
  /** The `metadata.generation` this status describes. */
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  /** `Ready`, one condition per type (a map list keyed by `type`, as `metav1.Condition`s are). */
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

/** v1 (stored): a flat spec. v2: the bucket and the retention grouped, which the conversion webhook maps. */
export const backups = defineCustomResource({
  group: 'backup.example.com',
  names: { kind: 'Backup' },
  versions: {
    v2: {
      spec: Type.Object({
        schedule: Type.String({ minLength: 1 }),
        storage: Type.Object({ bucket: Type.String({ minLength: 1 }) }),
        retention: Type.Optional(Type.Object({ count: Type.Integer({ minimum: 1, maximum: 100 }) })),
      }),
      status: Status,
      subresources: { status: true },
    },
    v1: {
      storage: true,
      spec: Type.Object({
        schedule: Type.String({ minLength: 1 }), // a cron expression: five fields, checked by the validating webhook
        bucket: Type.String({ minLength: 1 }),
        keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      }),
      status: Status,
      subresources: { status: true },
    },
  },
});

/** A Backup at v1, as the API server sends it. */
export type Backup = ObjectOfDefinition<typeof backups>;
/** A Backup at v2. */
export type BackupV2 = ObjectOf<typeof backups.descriptors.v2>;
/** What the operator reports. */
export type BackupStatus = Static<typeof Status>;
