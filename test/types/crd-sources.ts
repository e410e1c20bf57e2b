// What a CRD source is at the type level: a CRD literal with `x-kubernetes-*` keys and a plain-string
// apiVersion is one (CustomResourceDefinitionLike), a client-node typed model is not (it renames keys).
//
// Compiled by `npm run typecheck` only: nothing here runs. The `@ts-expect-error` line must not compile.

import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { CrdSource } from '../../src/crd/index.js';
import type { TestEnvironmentCrd } from '../../src/envtest/index.js';

const written = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] } } }],
  },
};
declare const typed: CustomResourceDefinition;
declare const model: V1CustomResourceDefinition;

export const sources: CrdSource[] = [written, typed, { crd: typed }];
export const envtest: TestEnvironmentCrd[] = [written, typed, 'config/crd/bases'];
// @ts-expect-error client-node's models rename `default` and `x-kubernetes-*`: read the file instead.
export const refused: CrdSource = model;
