// The ConfigMapSet custom resource: its object type, its descriptor, its CustomResourceDefinition, and installing it on a real cluster.
//
// Not run on its own: `npx tsx examples/configmapset/main.ts` uses it. See examples/README.md.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { newResourceClient, realClock, resources, sleep, type ResourceDescriptor } from '../../src/index.js';

/** The API group of the example's resource. */
export const GROUP = 'examples.kube-informer.dev';
/** Its version. */
export const VERSION = 'v1';
/** `apiVersion` of a ConfigMapSet. */
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The finalizer the operator puts on every set: its cleanup runs before the set may disappear. */
export const FINALIZER = `${GROUP}/cleanup`;
/** The label on each ConfigMap the operator writes: the name of its set. */
export const SET_LABEL = `${GROUP}/configmapset`;

/** What a ConfigMapSet asks for: one ConfigMap `<set>-<name>` per name, each holding `data`. */
export interface ConfigMapSetSpec {
  /** The ConfigMaps to keep, by suffix (DNS labels). */
  names: string[];
  /** The data of every one of them. */
  data: Record<string, string>;
}

/** One condition of a ConfigMapSet's status (the shape of `metav1.Condition`). */
export interface ConfigMapSetCondition {
  /** `Ready`. */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: 'True' | 'False' | 'Unknown';
  /** A CamelCase reason: `AllConfigMapsWritten`, `NameTaken`. */
  reason: string;
  /** For humans. */
  message: string;
  /** The generation this condition was computed for. */
  observedGeneration?: number;
  /** When `status` last changed (RFC 3339). */
  lastTransitionTime: string;
}

/** What the operator reports, through the status subresource. */
export interface ConfigMapSetStatus {
  /** The `metadata.generation` of the spec this status describes. */
  observedGeneration?: number;
  /** How many of `spec.names` have their ConfigMap with `spec.data`. */
  ready?: number;
  /** `Ready`, with the reason when not. */
  conditions?: ConfigMapSetCondition[];
}

/** A ConfigMapSet as the API server sends it. */
export interface ConfigMapSet {
  /** `examples.kube-informer.dev/v1`. */
  apiVersion?: typeof API_VERSION;
  /** `ConfigMapSet`. */
  kind?: 'ConfigMapSet';
  /** Standard object metadata. */
  metadata?: ObjectMeta;
  /** What the user wants. */
  spec?: ConfigMapSetSpec;
  /** What the operator observed and did. */
  status?: ConfigMapSetStatus;
}

/**
 * The descriptor of `configmapsets`: what the informers, the resource client and the controller are
 * typed by — and, on the embedded fake API server, the resource definition
 * (`server.resource({ ...configMapSets, generation: true })`: the fake then keeps `metadata.generation` as
 * kube-apiserver keeps it for a custom resource).
 */
export const configMapSets: ResourceDescriptor<ConfigMapSet> = Object.freeze({
  group: GROUP,
  version: VERSION,
  resource: 'configmapsets',
  kind: 'ConfigMapSet',
  namespaced: true,
});

/** The name of the CustomResourceDefinition: `<plural>.<group>`. */
export const CRD_NAME = `configmapsets.${GROUP}`;

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/**
 * The CustomResourceDefinition of ConfigMapSet: namespaced, one served and stored version with a
 * structural schema, and the status subresource (so the API server keeps spec writes and status
 * writes apart, and bumps `metadata.generation` only for the spec).
 */
export const configMapSetCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'configmapsets', singular: 'configmapset', kind: 'ConfigMapSet', listKind: 'ConfigMapSetList', shortNames: ['cms'] },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Ready', type: 'integer', jsonPath: '.status.ready' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['names'],
                properties: {
                  names: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 63, pattern: DNS_LABEL } },
                  data: { type: 'object', additionalProperties: { type: 'string' } },
                },
              },
              status: {
                type: 'object',
                properties: {
                  observedGeneration: { type: 'integer', format: 'int64' },
                  ready: { type: 'integer' },
                  conditions: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
                      properties: {
                        type: { type: 'string' },
                        status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                        reason: { type: 'string' },
                        message: { type: 'string' },
                        observedGeneration: { type: 'integer', format: 'int64' },
                        lastTransitionTime: { type: 'string', format: 'date-time' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

const established = (crd: CustomResourceDefinition): boolean =>
  (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');

/**
 * Installs {@link configMapSetCrd} on a real cluster (or finds it installed) and waits until the API
 * server reports it `Established` — the resource is served from then on. Rejects after `timeoutMs`
 * (default 30 000), with the API's error (403 without RBAC to create CRDs), or when `signal` aborts.
 * Resolves with `'created'` or `'existed'`.
 */
export async function installCrd(kubeConfig: KubeConfig, signal: AbortSignal, timeoutMs = 30_000): Promise<'created' | 'existed'> {
  const client = newResourceClient(kubeConfig, resources.customresourcedefinitions, { fieldManager: 'configmapset-example' });
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  try {
    let outcome: 'created' | 'existed' = 'created';
    let crd: CustomResourceDefinition;
    try {
      crd = await client.create(configMapSetCrd, deadline);
    } catch (err) {
      if (statusCode(err) !== 409) throw err;
      outcome = 'existed';
      crd = await client.get(CRD_NAME, undefined, deadline);
    }
    while (!established(crd)) {
      if (!(await sleep(realClock, 100, deadline))) {
        signal.throwIfAborted();
        throw new Error(`the CustomResourceDefinition ${CRD_NAME} was not Established after ${timeoutMs} ms`);
      }
      crd = await client.get(CRD_NAME, undefined, deadline);
    }
    return outcome;
  } finally {
    client.close();
  }
}
