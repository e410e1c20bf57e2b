// The ConfigMapSet custom resource, defined once (kube-informer/crd): its object types, descriptors and CustomResourceDefinition come from one TypeBox schema.
//
// Not run on its own: `npx tsx examples/configmapset/main.ts` uses it. See examples/README.md.

import type { KubeConfig } from '@kubernetes/client-node';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { newResourceClient, resources, type ObjectOf } from '../../src/index.js';
import { defineCustomResource, ensureCustomResourceDefinitions, Type, type ObjectOfDefinition, type Static } from '../../src/crd/index.js';
import { isNotFound } from '../../src/objects.js';
import type { CrdConversion } from '../../src/webhook/index.js';

/** The API group of the example's resource. */
export const GROUP = 'examples.kube-informer.dev';
/** The version the operator reads and writes (and the storage version). */
export const VERSION = 'v1';
/** `apiVersion` of a ConfigMapSet. */
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The finalizer the operator puts on every set: its cleanup runs before the set may disappear. */
export const FINALIZER = `${GROUP}/cleanup`;
/** The label on each ConfigMap the operator writes: the name of its set. */
export const SET_LABEL = `${GROUP}/configmapset`;

const DnsLabel = Type.String({ maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });
const Data = Type.Record(Type.String(), Type.String());

/** What the operator reports, through the status subresource (the same in both versions). */
const Status = Type.Object({
  /** The `metadata.generation` of the spec this status describes. */
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  /** How many of the set's names have their ConfigMap with the set's data. */
  ready: Type.Optional(Type.Integer()),
  /** `Ready`, with the reason when not (`metav1.Condition`s, one per type: a map list keyed by `type`). */
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

/**
 * The ConfigMapSet, written once: v1 (served, stored, what the operator works on) — one ConfigMap
 * `<set>-<name>` per `spec.names` entry, each holding `spec.data` — and v2, which lists
 * `spec.configMaps[]` of `{ name }` (room for per-ConfigMap fields); the conversion webhook
 * (webhooks.ts) converts between them. Both with the status subresource, so the API server keeps spec
 * and status writes apart and bumps `metadata.generation` only for the spec.
 */
export const configMapSetDefinition = defineCustomResource({
  group: GROUP,
  names: { kind: 'ConfigMapSet', shortNames: ['cms'] },
  versions: {
    v1: {
      storage: true,
      spec: Type.Object({ names: Type.Array(DnsLabel, { maxItems: 64 }), data: Type.Optional(Data) }),
      status: Status,
      subresources: { status: true },
      printerColumns: [
        { name: 'Ready', type: 'integer', jsonPath: '.status.ready' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
    v2: {
      spec: Type.Object({ configMaps: Type.Array(Type.Object({ name: DnsLabel }), { maxItems: 64 }), data: Type.Optional(Data) }),
      status: Status,
      subresources: { status: true },
      printerColumns: [
        { name: 'Ready', type: 'integer', jsonPath: '.status.ready' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  },
});

/** A ConfigMapSet (v1) as the API server sends it. */
export type ConfigMapSet = ObjectOfDefinition<typeof configMapSetDefinition>;
/** What a v1 ConfigMapSet asks for. */
export type ConfigMapSetSpec = ConfigMapSet['spec'];
/** What the operator reports. */
export type ConfigMapSetStatus = Static<typeof Status>;
/** A ConfigMapSet read at v2. */
export type ConfigMapSetV2 = ObjectOf<typeof configMapSetDefinition.descriptors.v2>;

/**
 * The descriptor of `configmapsets` at v1: what the informers, the resource client and the controller
 * are typed by — and, on the embedded fake API server, the resource definition
 * (`server.resource({ ...configMapSets, generation: true })`: the fake then keeps `metadata.generation` as
 * kube-apiserver keeps it for a custom resource).
 */
export const configMapSets = configMapSetDefinition.descriptor;

/** The name of the CustomResourceDefinition: `<plural>.<group>`. */
export const CRD_NAME = configMapSetDefinition.crd.metadata?.name ?? '';

/**
 * The CustomResourceDefinition to install. With `conversion` (the conversion webhook's stanza,
 * `crdConversion(...)`), as defined: v2 served, converted by the webhook. Without it, v2 is not
 * served: with the `None` strategy the API server would only relabel a v1 object as v2 (`spec.names`
 * under a schema that has `spec.configMaps`), so v2 is served only while a webhook converts it.
 */
export function configMapSetCrd(conversion?: CrdConversion): CustomResourceDefinition {
  const crd = structuredClone(configMapSetDefinition.crd);
  if (conversion !== undefined) crd.spec.conversion = structuredClone(conversion);
  else for (const version of crd.spec.versions) version.served = version.name === VERSION;
  return crd;
}

/** Options of {@link installCrd}. */
export interface InstallCrdOptions {
  /** How long to wait for `Established`, in ms. Default 30 000. */
  timeoutMs?: number;
  /** The conversion webhook's stanza: v2 is served through it (see {@link configMapSetCrd}). Default: v1 only. */
  conversion?: CrdConversion;
}

/**
 * Installs the CustomResourceDefinition (creates it, or replaces the one installed) with
 * `ensureCustomResourceDefinitions` and waits until the API server reports it `Established` — the
 * resource is served from then on. Resolves with `'created'` or `'existed'`. Rejects with a
 * `CustomResourceDefinitionError` naming the CRD (refused, or not Established after `timeoutMs`), with
 * the API's error (403 without RBAC to create CRDs), or when `signal` aborts.
 */
export async function installCrd(kubeConfig: KubeConfig, signal: AbortSignal, options: InstallCrdOptions = {}): Promise<'created' | 'existed'> {
  const client = newResourceClient(kubeConfig, resources.customresourcedefinitions, { fieldManager: 'configmapset-example' });
  try {
    const existed = await client.get(CRD_NAME, undefined, signal).then(
      () => true,
      (err: unknown) => (isNotFound(err) ? false : Promise.reject(err)),
    );
    await ensureCustomResourceDefinitions(client, [configMapSetCrd(options.conversion)], { signal, timeoutMs: options.timeoutMs ?? 30_000 });
    return existed ? 'existed' : 'created';
  } finally {
    client.close();
  }
}
