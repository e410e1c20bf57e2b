// Installs custom resource definitions at run time: create or update each, then wait until the server says Established.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { ApiStatusError, ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';
import { realClock, sleep, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { validateOptions } from '../core/options.js';
import type { ResourceClient } from '../listwatch/index.js';

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

function crdOf(source: CrdSource): CustomResourceDefinition {
  return 'crd' in source ? source.crd : source;
}

function causesOf(err: unknown): string[] {
  if (!(err instanceof ApiStatusError)) return [];
  const details = (err.status as { details?: { causes?: { field?: string; message?: string }[] } } | undefined)?.details;
  return (details?.causes ?? []).map((c) => (c.field === undefined ? String(c.message) : `${c.field}: ${c.message}`));
}

function condition(crd: CustomResourceDefinition, type: string): { status: string; reason?: string; message?: string } | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/**
 * Creates each CRD, or replaces it when one of that name exists (keeping its `resourceVersion`), then
 * waits until the server reports `Established` (its version is served). Resolves with the CRDs as the
 * server holds them. `client` is `newResourceClient(kubeConfig, resources.customresourcedefinitions)`.
 *
 * Server-side apply replaces create-or-update once the client speaks it.
 *
 * Recovery: rejects with {@link CustomResourceDefinitionError} (`CRD_NOT_ESTABLISHED`) naming the CRD
 * when the server refuses it (the server's field errors in `causes`, the `ApiStatusError` in `cause`),
 * when `NamesAccepted` is false (a name conflict, with the server's reason), or when `Established` is
 * not reached within `timeoutMs`; with `AbortedError` when `signal` aborts; with the client's error for
 * anything else (network, RBAC: `ApiStatusError` 403).
 */
export async function ensureCustomResourceDefinitions(
  client: Pick<ResourceClient<CustomResourceDefinition>, 'get' | 'create' | 'replace'>,
  definitions: readonly CrdSource[],
  options: EnsureCustomResourceDefinitionsOptions = {},
): Promise<CustomResourceDefinition[]> {
  validateOptions('ensureCustomResourceDefinitions', options, { timeoutMs: 'positiveDuration', pollIntervalMs: 'positiveDuration', clock: 'clock', signal: 'object' });
  const out: CustomResourceDefinition[] = [];
  for (const source of definitions) out.push(await ensureOne(client, crdOf(source), options));
  return out;
}

async function ensureOne(
  client: Pick<ResourceClient<CustomResourceDefinition>, 'get' | 'create' | 'replace'>,
  crd: CustomResourceDefinition,
  options: EnsureCustomResourceDefinitionsOptions,
): Promise<CustomResourceDefinition> {
  const { signal, clock = realClock, timeoutMs = 60_000, pollIntervalMs = 250 } = options;
  const name = crd.metadata?.name ?? '';
  let current: CustomResourceDefinition;
  try {
    current = await write(client, crd, name, signal);
  } catch (err) {
    if (!(err instanceof ApiStatusError) || (err.statusCode !== 422 && err.statusCode !== 400)) throw err;
    const causes = causesOf(err);
    throw new CustomResourceDefinitionError(name, `the API server refused CustomResourceDefinition ${name}: ${err.message}`, causes, { cause: err });
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

async function write(
  client: Pick<ResourceClient<CustomResourceDefinition>, 'get' | 'create' | 'replace'>,
  crd: CustomResourceDefinition,
  name: string,
  signal: AbortSignal | undefined,
): Promise<CustomResourceDefinition> {
  try {
    return await client.create(crd, signal);
  } catch (err) {
    if (!(err instanceof ApiStatusError) || err.statusCode !== 409) throw err;
  }
  for (let attempt = 0; ; attempt++) {
    const existing = await client.get(name, undefined, signal);
    try {
      return await client.replace({ ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } }, signal);
    } catch (err) {
      if (!(err instanceof ApiStatusError) || err.statusCode !== 409 || attempt >= 4) throw err;
    }
  }
}
