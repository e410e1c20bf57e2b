// Installs custom resource definitions at run time: server-side apply each, then wait until the server says Established and serves it.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { ApiStatusError, ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';
import { realClock, sleep, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { validateOptions } from '../core/options.js';
import { resources } from '../core/resources.js';
import { ApplyConflictError, NetworkError, newResourceClient, type ApplyConfiguration, type KubeConfigLike, type ResourceClient } from '../listwatch/index.js';

/**
 * A CRD the server refused, one that did not become `Established` (or served) in time, or one whose
 * schema holds client-node model property names the server would ignore (code `CRD_NOT_ESTABLISHED`).
 */
export class CustomResourceDefinitionError extends KubeInformerError {
  /** The CRD's name (`widgets.example.com`). */
  readonly crdName: string;
  /** Field errors the server named when it refused the CRD (`spec.versions[0].schema.openAPIV3Schema...: ...`); empty otherwise. */
  readonly causes: readonly string[];
  constructor(crdName: string, message: string, causes: readonly string[] = [], options?: KubeInformerErrorOptions) {
    super(ErrorCodes.CRD_NOT_ESTABLISHED, message, options);
    this.crdName = crdName;
    this.causes = causes;
  }
}

/** Options of {@link ensureCustomResourceDefinitions}. */
export interface EnsureCustomResourceDefinitionsOptions {
  /**
   * The field manager that owns what the CRDs set (server-side apply), at most 128 characters.
   * Default: the client's own `fieldManager` (`'kube-informer'` for a `newResourceClient` given none).
   */
  fieldManager?: string;
  /**
   * Take over fields another manager owns with another value (`kubectl apply --server-side
   * --force-conflicts`). Default `true`: the program is the source of truth for its own CRDs, and
   * without it every upgrade that changes a schema installed before by `kubectl`, Helm or another
   * field manager fails with a conflict. `false` rejects instead, naming each field and its manager.
   */
  force?: boolean;
  /** How long to wait for each CRD to become `Established` (and served, given a KubeConfig), in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** How often to read a CRD's conditions while waiting, in milliseconds. Default 250. */
  pollIntervalMs?: number;
  /** Cancels the wait (rejects with `AbortedError`). Default: none. */
  signal?: AbortSignal;
  /** The clock of the waits. Default: the real clock. */
  clock?: Clock;
}

/** Options of {@link waitForCustomResourceDefinitions}: those of the wait. */
export type WaitForCustomResourceDefinitionsOptions = Omit<EnsureCustomResourceDefinitionsOptions, 'fieldManager' | 'force'>;

/** A definition from `defineCustomResource` (anything holding a `crd`). */
export interface HasCustomResourceDefinition {
  /** The CRD. */
  readonly crd: CustomResourceDefinition;
}

/**
 * A CustomResourceDefinition written as plain data in TypeScript: the fields the installer reads are
 * typed, everything else is sent as it is. `kubernetes-types`' `CustomResourceDefinition` types
 * `apiVersion` as a literal and has no `x-kubernetes-*` schema keys, so a CRD literal with a CEL rule
 * does not type-check as one; it does as this.
 */
export interface CustomResourceDefinitionLike {
  /** `apiextensions.k8s.io/v1`. */
  apiVersion?: string;
  /** `CustomResourceDefinition`. */
  kind?: string;
  /** Its metadata. */
  metadata?: {
    /** `<plural>.<group>`. */
    name?: string;
    [key: string]: unknown;
  };
  /** Group, names, scope, versions (with their schemas, any key). */
  spec?: {
    /** The API group, e.g. `example.com`. */
    group?: string;
    /** Its names. */
    names?: {
      /** The plural resource name used in URLs. */
      plural?: string;
      /** The kind of its objects. */
      kind?: string;
      [key: string]: unknown;
    };
    /** `Namespaced` or `Cluster`. */
    scope?: string;
    /** Its versions. */
    versions?: ReadonlyArray<{
      /** `v1`, `v1beta1`, … */
      name?: string;
      /** Whether the version is served. */
      served?: boolean;
      [key: string]: unknown;
    }>;
    [key: string]: unknown;
  };
  /** Any other field, sent as it is. */
  [key: string]: unknown;
}

/**
 * A CRD held in memory: a definition from `defineCustomResource`, or a CRD object itself (plain data,
 * `apiextensions.k8s.io/v1`, every key as the server spells it). A CRD in a file is read with
 * `readCustomResourceDefinitionFiles`; envtest's `crds` take such paths beside these.
 */
export type CrdSource = HasCustomResourceDefinition | CustomResourceDefinition | CustomResourceDefinitionLike;

/** What {@link ensureCustomResourceDefinitions} needs of a client: `newResourceClient(kubeConfig, resources.customresourcedefinitions)` is one. */
export type CustomResourceDefinitionClient = Pick<ResourceClient<CustomResourceDefinition>, 'get' | 'apply'>;

/**
 * Where CRDs are installed: a {@link CustomResourceDefinitionClient}, or a KubeConfig. Given a
 * KubeConfig, the installer builds its own clients (and closes them) and also waits until each served
 * version of each CRD answers a list, which a client of CRDs alone cannot ask.
 */
export type CustomResourceDefinitionTarget = CustomResourceDefinitionClient | KubeConfigLike;

/** The metadata the server sets: never part of an apply configuration (a `resourceVersion` would make it a precondition). */
const SERVER_SET = new Set(['resourceVersion', 'uid', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']);

const WAIT_SCHEMA = {
  timeoutMs: 'positiveDuration',
  pollIntervalMs: 'positiveDuration',
  clock: 'clock',
  signal: 'object',
} as const;
const OPTION_SCHEMA = { ...WAIT_SCHEMA, fieldManager: 'string', force: 'boolean' } as const;

/** The apply configuration of a CRD: its identity, the metadata a writer sets, the spec; no status. */
function applyConfiguration(crd: CustomResourceDefinition): ApplyConfiguration<CustomResourceDefinition> {
  const metadata = Object.fromEntries(Object.entries(crd.metadata ?? {}).filter(([k]) => !SERVER_SET.has(k))) as ApplyConfiguration<CustomResourceDefinition>['metadata'];
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata, spec: crd.spec };
}

/** The CRD of a source, refused when its schema holds the property names of client-node's models (which the server would drop). */
function crdOf(source: CrdSource): CustomResourceDefinition {
  const crd = ('crd' in source ? source.crd : source) as CustomResourceDefinition;
  for (const [i, version] of (crd.spec?.versions ?? []).entries()) {
    const found = modelKey(version.schema?.openAPIV3Schema, `spec.versions[${i}].schema.openAPIV3Schema`);
    if (found !== undefined) {
      const name = crd.metadata?.name ?? '';
      throw new CustomResourceDefinitionError(
        name,
        `CustomResourceDefinition ${name} holds ${found}: a property name of client-node's typed models (loadYaml, loadAllYaml), which the API server ignores, ` +
          'so a default or a validation rule would silently not apply. Pass plain data: readCustomResourceDefinitionFiles(path), or yaml\'s parse()',
      );
    }
  }
  return crd;
}

/** `_default`, `x_kubernetes_…` or `xKubernetes…` keys in a schema, with their path; the first found. */
function modelKey(schema: unknown, path: string): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  for (const [key, value] of Object.entries(schema)) {
    if (key === '_default' || key.startsWith('x_kubernetes_') || key.startsWith('xKubernetes')) return `\`${key}\` at ${path}`;
    // Descend only where schemas nest (property names under `properties` are the user's own).
    if (key === 'properties' || key === 'patternProperties' || key === 'definitions') {
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        const found = modelKey(child, `${path}.${key}[${name}]`);
        if (found !== undefined) return found;
      }
    } else if (['items', 'additionalProperties', 'not'].includes(key)) {
      const found = modelKey(value, `${path}.${key}`);
      if (found !== undefined) return found;
    } else if (['allOf', 'anyOf', 'oneOf'].includes(key) && Array.isArray(value)) {
      for (const [j, child] of value.entries()) {
        const found = modelKey(child, `${path}.${key}[${j}]`);
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

function causesOf(err: ApiStatusError): string[] {
  if (err instanceof ApplyConflictError) return err.conflicts.map((c) => `${c.field}: owned by ${c.manager}`);
  const details = (err.status as { details?: { causes?: { field?: string; message?: string }[] } } | undefined)?.details;
  return (details?.causes ?? []).map((c) => (c.field === undefined ? String(c.message) : `${c.field}: ${c.message}`));
}

function condition(crd: CustomResourceDefinition, type: string): { status: string; reason?: string; message?: string } | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/** An answer worth asking again: the server is starting or restarting (429, 503), the resource not served yet (404), no connection. */
function transient(err: unknown): boolean {
  return err instanceof NetworkError || (err instanceof ApiStatusError && [404, 429, 503].includes(err.statusCode));
}

function isClient(target: CustomResourceDefinitionTarget): target is CustomResourceDefinitionClient {
  return typeof (target as Partial<CustomResourceDefinitionClient>).apply === 'function' && typeof (target as Partial<CustomResourceDefinitionClient>).get === 'function';
}

/**
 * Installs each CRD by server-side apply (created when absent, updated to exactly this spec when
 * present: fields the field manager set before and no longer sets are removed), one after the other,
 * waiting until the server reports it `Established` (its versions are served) before the next.
 * Resolves with the CRDs as the server holds them. `target` is a client,
 * `newResourceClient(kubeConfig, resources.customresourcedefinitions)`, or a KubeConfig: then the
 * installer builds its clients itself and also waits until each served version answers a list (what
 * a controller started next needs; `Established` comes a moment before). What is sent is the CRD's
 * `metadata` (without the fields the server sets: `resourceVersion`, `uid`, `managedFields` …) and
 * `spec`; a `status` is left out. `force` defaults to `true` (see its option).
 *
 * Recovery: rejects with {@link CustomResourceDefinitionError} (`CRD_NOT_ESTABLISHED`) naming the CRD
 * when the server refuses it (the server's field errors in `causes`, the `ApiStatusError` in `cause`),
 * when an apply with `force: false` conflicts (each field and its manager in `causes`, the
 * `ApplyConflictError` in `cause`), when its schema holds client-node model property names
 * (`_default`, `x_kubernetes_validations`: the server would ignore them),
 * when `NamesAccepted` is false (a name conflict, with the server's reason), or when `Established`
 * (and, given a KubeConfig, served) is not reached within `timeoutMs`; with `AbortedError` when
 * `signal` aborts; with the client's error for anything else (network, RBAC: `ApiStatusError` 403).
 */
export async function ensureCustomResourceDefinitions(
  target: CustomResourceDefinitionTarget,
  definitions: readonly CrdSource[],
  options: EnsureCustomResourceDefinitionsOptions = {},
): Promise<CustomResourceDefinition[]> {
  validateOptions('ensureCustomResourceDefinitions', options, OPTION_SCHEMA);
  const crds = definitions.map(crdOf);
  return withClient(target, async (client, kubeConfig) => {
    const out: CustomResourceDefinition[] = [];
    for (const crd of crds) {
      const applied = await applyOne(client, crd, options);
      out.push(await waitOne(client, kubeConfig, crd, applied, options));
    }
    return out;
  });
}

/**
 * Waits, without writing anything, until each CRD (already installed) is `Established` and, given a
 * KubeConfig, each served version answers a list: after a restart of kube-apiserver, whose custom
 * resource handlers answer 429 or 404 for a moment after `/readyz` is ok. An answer of 404, 429 or 503
 * and a network failure are asked again until `timeoutMs`. Resolves with the CRDs as the server holds
 * them.
 *
 * Recovery: rejects as {@link ensureCustomResourceDefinitions} does, the apply aside.
 */
export async function waitForCustomResourceDefinitions(
  target: CustomResourceDefinitionTarget,
  definitions: readonly CrdSource[],
  options: WaitForCustomResourceDefinitionsOptions = {},
): Promise<CustomResourceDefinition[]> {
  validateOptions('waitForCustomResourceDefinitions', options, WAIT_SCHEMA);
  const crds = definitions.map(crdOf);
  return withClient(target, async (client, kubeConfig) => {
    const out: CustomResourceDefinition[] = [];
    for (const crd of crds) out.push(await waitOne(client, kubeConfig, crd, undefined, options));
    return out;
  });
}

async function withClient<R>(target: CustomResourceDefinitionTarget, use: (client: CustomResourceDefinitionClient, kubeConfig: KubeConfigLike | undefined) => Promise<R>): Promise<R> {
  if (isClient(target)) return use(target, undefined);
  const client = newResourceClient(target, resources.customresourcedefinitions);
  try {
    return await use(client, target);
  } finally {
    client.close();
  }
}

async function applyOne(client: CustomResourceDefinitionClient, crd: CustomResourceDefinition, options: EnsureCustomResourceDefinitionsOptions): Promise<CustomResourceDefinition> {
  const { signal, fieldManager, force = true } = options;
  const name = crd.metadata?.name ?? '';
  try {
    return await client.apply(applyConfiguration(crd), { ...(fieldManager === undefined ? {} : { fieldManager }), force, signal });
  } catch (err) {
    if (err instanceof ApplyConflictError) {
      throw new CustomResourceDefinitionError(name, `the API server refused to apply CustomResourceDefinition ${name}: ${err.message}`, causesOf(err), { cause: err });
    }
    if (!(err instanceof ApiStatusError) || (err.statusCode !== 422 && err.statusCode !== 400)) throw err;
    throw new CustomResourceDefinitionError(name, `the API server refused CustomResourceDefinition ${name}: ${err.message}`, causesOf(err), { cause: err });
  }
}

/** Waits until `crd` is Established (from `current` when the apply answered it), then, with a KubeConfig, until each served version lists. */
async function waitOne(
  client: CustomResourceDefinitionClient,
  kubeConfig: KubeConfigLike | undefined,
  crd: CustomResourceDefinition,
  current: CustomResourceDefinition | undefined,
  options: EnsureCustomResourceDefinitionsOptions,
): Promise<CustomResourceDefinition> {
  const { signal, clock = realClock, timeoutMs = 60_000, pollIntervalMs = 250 } = options;
  const name = crd.metadata?.name ?? '';
  const deadline = clock.now() + timeoutMs;
  let last = 'not read yet';
  const pause = async (): Promise<void> => {
    const left = deadline - clock.now();
    if (left <= 0) throw new CustomResourceDefinitionError(name, `CustomResourceDefinition ${name} did not become Established${kubeConfig === undefined ? '' : ' and served'} within ${timeoutMs} ms (${last})`);
    if (!(await sleep(clock, Math.min(pollIntervalMs, left), signal))) throw new AbortedError(`ensureCustomResourceDefinitions: aborted while waiting for ${name}`, { cause: signal?.reason });
  };
  for (;;) {
    if (current === undefined) {
      try {
        current = await client.get(name, undefined, signal);
      } catch (err) {
        if (signal?.aborted || !transient(err)) throw err;
        last = `reading it failed: ${err instanceof Error ? err.message : String(err)}`;
        await pause();
        continue;
      }
    }
    const names = condition(current, 'NamesAccepted');
    if (names?.status === 'False') {
      throw new CustomResourceDefinitionError(name, `CustomResourceDefinition ${name}: names not accepted (${names.reason ?? ''}): ${names.message ?? ''}`);
    }
    const established = condition(current, 'Established');
    last = `Established: ${established?.status ?? 'not reported'}${established?.message ? `, ${established.message}` : ''}`;
    if (established?.status === 'True') {
      const unserved = kubeConfig === undefined ? undefined : await firstUnserved(kubeConfig, current, signal);
      if (unserved === undefined) return current;
      last = `Established, but ${unserved}`;
    }
    await pause();
    current = undefined;
  }
}

/** Why the first served version of `crd` that does not answer a list (`limit=1`) yet fails, or undefined when all answer. */
async function firstUnserved(kubeConfig: KubeConfigLike, crd: CustomResourceDefinition, signal: AbortSignal | undefined): Promise<string | undefined> {
  const { group, names, scope } = crd.spec;
  for (const version of crd.spec.versions) {
    if (!version.served) continue;
    const client = newResourceClient(kubeConfig, { group, version: version.name, resource: names.plural, kind: names.kind, namespaced: scope === 'Namespaced' });
    try {
      await client.list({ limit: 1, signal });
    } catch (err) {
      if (signal?.aborted || !transient(err)) throw err;
      return `listing ${group}/${version.name} ${names.plural} failed: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      client.close();
    }
  }
  return undefined;
}
