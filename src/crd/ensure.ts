// Installs custom resource definitions at run time: server-side apply each, then wait until the server says Established.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { ApiStatusError, ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';
import { realClock, sleep, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { validateOptions } from '../core/options.js';
import { ApplyConflictError, type ApplyConfiguration, type ResourceClient } from '../listwatch/index.js';

/** A CRD the server refused, or one that did not become `Established` in time (code `CRD_NOT_ESTABLISHED`). */
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
  /** How long to wait for each CRD to become `Established`, in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** How often to read a CRD's conditions while waiting, in milliseconds. Default 250. */
  pollIntervalMs?: number;
  /** Cancels the wait (rejects with `AbortedError`). Default: none. */
  signal?: AbortSignal;
  /** The clock of the waits. Default: the real clock. */
  clock?: Clock;
}

/** A definition from `defineCustomResource` (anything holding a `crd`). */
export interface HasCustomResourceDefinition {
  /** The CRD. */
  readonly crd: CustomResourceDefinition;
}

/** Anything that gives a CRD: a definition from `defineCustomResource`, or a CRD object itself. */
export type CrdSource = HasCustomResourceDefinition | CustomResourceDefinition;

/** What {@link ensureCustomResourceDefinitions} needs of a client: `newResourceClient(kubeConfig, resources.customresourcedefinitions)` is one. */
export type CustomResourceDefinitionClient = Pick<ResourceClient<CustomResourceDefinition>, 'get' | 'apply'>;

/** The metadata the server sets: never part of an apply configuration (a `resourceVersion` would make it a precondition). */
const SERVER_SET = new Set(['resourceVersion', 'uid', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']);

/** The apply configuration of a CRD: its identity, the metadata a writer sets, the spec; no status. */
function applyConfiguration(crd: CustomResourceDefinition): ApplyConfiguration<CustomResourceDefinition> {
  const metadata = Object.fromEntries(Object.entries(crd.metadata ?? {}).filter(([k]) => !SERVER_SET.has(k))) as ApplyConfiguration<CustomResourceDefinition>['metadata'];
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata, spec: crd.spec };
}

function crdOf(source: CrdSource): CustomResourceDefinition {
  return 'crd' in source ? source.crd : source;
}

function causesOf(err: ApiStatusError): string[] {
  if (err instanceof ApplyConflictError) return err.conflicts.map((c) => `${c.field}: owned by ${c.manager}`);
  const details = (err.status as { details?: { causes?: { field?: string; message?: string }[] } } | undefined)?.details;
  return (details?.causes ?? []).map((c) => (c.field === undefined ? String(c.message) : `${c.field}: ${c.message}`));
}

function condition(crd: CustomResourceDefinition, type: string): { status: string; reason?: string; message?: string } | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/**
 * Installs each CRD by server-side apply (created when absent, updated to exactly this spec when
 * present: fields the field manager set before and no longer sets are removed), one after the other,
 * waiting until the server reports it `Established` (its versions are served) before the next.
 * Resolves with the CRDs as the server holds them. `client` is
 * `newResourceClient(kubeConfig, resources.customresourcedefinitions)`. What is sent is the CRD's
 * `metadata` (without the fields the server sets: `resourceVersion`, `uid`, `managedFields` …) and
 * `spec`; a `status` is left out. `force` defaults to `true` (see its option).
 *
 * Recovery: rejects with {@link CustomResourceDefinitionError} (`CRD_NOT_ESTABLISHED`) naming the CRD
 * when the server refuses it (the server's field errors in `causes`, the `ApiStatusError` in `cause`),
 * when an apply with `force: false` conflicts (each field and its manager in `causes`, the
 * `ApplyConflictError` in `cause`),
 * when `NamesAccepted` is false (a name conflict, with the server's reason), or when `Established` is
 * not reached within `timeoutMs`; with `AbortedError` when `signal` aborts; with the client's error for
 * anything else (network, RBAC: `ApiStatusError` 403).
 */
export async function ensureCustomResourceDefinitions(
  client: CustomResourceDefinitionClient,
  definitions: readonly CrdSource[],
  options: EnsureCustomResourceDefinitionsOptions = {},
): Promise<CustomResourceDefinition[]> {
  validateOptions('ensureCustomResourceDefinitions', options, {
    fieldManager: 'string',
    force: 'boolean',
    timeoutMs: 'positiveDuration',
    pollIntervalMs: 'positiveDuration',
    clock: 'clock',
    signal: 'object',
  });
  const out: CustomResourceDefinition[] = [];
  for (const source of definitions) out.push(await ensureOne(client, crdOf(source), options));
  return out;
}

async function ensureOne(
  client: CustomResourceDefinitionClient,
  crd: CustomResourceDefinition,
  options: EnsureCustomResourceDefinitionsOptions,
): Promise<CustomResourceDefinition> {
  const { signal, clock = realClock, timeoutMs = 60_000, pollIntervalMs = 250, fieldManager, force = true } = options;
  const name = crd.metadata?.name ?? '';
  let current: CustomResourceDefinition;
  try {
    current = await client.apply(applyConfiguration(crd), { ...(fieldManager === undefined ? {} : { fieldManager }), force, signal });
  } catch (err) {
    if (err instanceof ApplyConflictError) {
      throw new CustomResourceDefinitionError(name, `the API server refused to apply CustomResourceDefinition ${name}: ${err.message}`, causesOf(err), { cause: err });
    }
    if (!(err instanceof ApiStatusError) || (err.statusCode !== 422 && err.statusCode !== 400)) throw err;
    throw new CustomResourceDefinitionError(name, `the API server refused CustomResourceDefinition ${name}: ${err.message}`, causesOf(err), { cause: err });
  }
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    const names = condition(current, 'NamesAccepted');
    if (names?.status === 'False') {
      throw new CustomResourceDefinitionError(name, `CustomResourceDefinition ${name}: names not accepted (${names.reason ?? ''}): ${names.message ?? ''}`);
    }
    const established = condition(current, 'Established');
    if (established?.status === 'True') return current;
    const left = deadline - clock.now();
    if (left <= 0) {
      throw new CustomResourceDefinitionError(name, `CustomResourceDefinition ${name} did not become Established within ${timeoutMs} ms (Established: ${established?.status ?? 'not reported'}${established?.message ? `, ${established.message}` : ''})`);
    }
    if (!(await sleep(clock, Math.min(pollIntervalMs, left), signal))) throw new AbortedError(`ensureCustomResourceDefinitions: aborted while waiting for ${name}`);
    current = await client.get(name, undefined, signal);
  }
}

