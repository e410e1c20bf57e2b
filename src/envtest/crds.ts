// CustomResourceDefinitions for a test environment: read from objects or YAML files, created, awaited.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { sleep, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import { TestEnvironmentError } from './errors.js';
import { request, statusMessage, type ApiServerEndpoint } from './http.js';

/**
 * A CRD to install: the object itself (`apiextensions.k8s.io/v1`, e.g. a client-node
 * `V1CustomResourceDefinition` or a plain object), or the path of a `.yaml`/`.yml`/`.json` file or
 * of a directory of them (not recursive; documents of other kinds in them are skipped, as
 * controller-runtime's `CRDDirectoryPaths` does).
 */
export type CrdSource = string | CustomResourceDefinitionLike;

/** The fields of a CustomResourceDefinition envtest reads; the rest is sent to the server as it is. */
export interface CustomResourceDefinitionLike {
  /** `apiextensions.k8s.io/v1`. */
  apiVersion?: string;
  /** `CustomResourceDefinition`. */
  kind?: string;
  /** Its metadata. */
  metadata?: {
    /** Its name, `<plural>.<group>`. */
    name?: string;
  };
  /** Group, names, scope and versions (only those read here are typed). */
  spec?: {
    /** The API group, e.g. `example.com`. */
    group?: string;
    /** Its names. */
    names?: {
      /** The plural resource name used in URLs. */
      plural?: string;
    };
    /** Its versions. */
    versions?: ReadonlyArray<{
      /** `v1`, `v1beta1`, … */
      name?: string;
      /** Whether the version is served (a list of each served version is awaited). */
      served?: boolean;
    }>;
  };
}

const CRD_KIND = 'CustomResourceDefinition';

/** Reads every source into CRD objects (files and directories parsed as YAML, other kinds skipped). */
export function loadCrds(sources: readonly CrdSource[]): CustomResourceDefinitionLike[] {
  const out: CustomResourceDefinitionLike[] = [];
  for (const [i, source] of sources.entries()) {
    if (typeof source !== 'string') {
      out.push(source);
      continue;
    }
    if (!existsSync(source)) {
      throw new InvalidOptionError(`startTestEnvironment: option crds[${i}] names ${source}, which does not exist (a relative path is resolved from the working directory, ${resolve('.')})`);
    }
    const files = statSync(source).isDirectory()
      ? readdirSync(source)
          .filter((f) => ['.yaml', '.yml', '.json'].includes(extname(f)))
          .sort()
          .map((f) => join(source, f))
      : [source];
    for (const file of files) {
      const docs = loadAllYaml(readFileSync(file, 'utf8')) as unknown[];
      for (const doc of docs) {
        if (doc !== null && typeof doc === 'object' && (doc as { kind?: unknown }).kind === CRD_KIND) out.push(doc);
      }
    }
  }
  return out;
}

/**
 * Creates each CRD, then waits until every one is `Established` and each served version answers a
 * list: a controller started right after sees its resource. Throws `ENVTEST_CRD_REJECTED` quoting the
 * server when it refuses one (a non-structural schema, a bad name) or when its names conflict.
 */
export async function installCrds(
  endpoint: ApiServerEndpoint,
  crds: readonly CustomResourceDefinitionLike[],
  wait: { clock: Clock; deadline: number; signal?: AbortSignal | undefined },
): Promise<string[]> {
  const base = `${endpoint.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  const names: string[] = [];
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '(no metadata.name)';
    const body = { ...crd, apiVersion: crd.apiVersion ?? 'apiextensions.k8s.io/v1', kind: crd.kind ?? CRD_KIND };
    const answer = await request(base, { method: 'POST', body, endpoint, signal: wait.signal });
    if (answer.status === 201 || answer.status === 200) {
      names.push(name);
      continue;
    }
    wait.signal?.throwIfAborted();
    throw new TestEnvironmentError(
      'ENVTEST_CRD_REJECTED',
      `envtest: the API server refused CustomResourceDefinition ${name} (HTTP ${answer.status}): ${statusMessage(answer)}. ` +
        'Fix the CRD (a schema must be structural: every field typed, `x-kubernetes-preserve-unknown-fields` where it is open); `kubectl apply --dry-run=server -f <file>` against any cluster shows the same message.',
    );
  }
  await waitEstablished(endpoint, crds, wait);
  return names;
}

/** Waits until every CRD is `Established` and each of its served versions answers a list (also after a restart). */
export async function waitEstablished(
  endpoint: ApiServerEndpoint,
  crds: readonly CustomResourceDefinitionLike[],
  wait: { clock: Clock; deadline: number; signal?: AbortSignal | undefined },
): Promise<void> {
  for (const crd of crds) await waitOneEstablished(endpoint, crd, wait);
}

async function waitOneEstablished(
  endpoint: ApiServerEndpoint,
  crd: CustomResourceDefinitionLike,
  wait: { clock: Clock; deadline: number; signal?: AbortSignal | undefined },
): Promise<void> {
  const name = crd.metadata?.name ?? '';
  const url = `${endpoint.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
  let last = 'not read yet';
  for (;;) {
    const answer = await request(url, { endpoint, signal: wait.signal });
    if (answer.status === 200) {
      const conditions = (JSON.parse(answer.body) as { status?: { conditions?: Array<{ type: string; status: string; message?: string }> } }).status?.conditions ?? [];
      const names = conditions.find((c) => c.type === 'NamesAccepted');
      if (names?.status === 'False') {
        throw new TestEnvironmentError('ENVTEST_CRD_REJECTED', `envtest: CustomResourceDefinition ${name} names were not accepted: ${names.message ?? ''}. Fix: give it a plural, kind and short names no other resource of its group uses.`);
      }
      const established = conditions.find((c) => c.type === 'Established');
      last = established ? `Established=${established.status} ${established.message ?? ''}`.trim() : 'no Established condition yet';
      if (established?.status === 'True' && (await versionsServed(endpoint, crd, wait.signal))) return;
    } else {
      last = `GET answered ${answer.status}: ${statusMessage(answer)}`;
    }
    if (wait.clock.now() >= wait.deadline) {
      throw new TestEnvironmentError('ENVTEST_CRD_REJECTED', `envtest: CustomResourceDefinition ${name} did not become Established before the startTimeoutMs ran out (${last}). Fix: raise startTimeoutMs, or see the apiserver log for why.`);
    }
    if (!(await sleep(wait.clock, 50, wait.signal))) throw new AbortedError('envtest: the start was aborted while waiting for CRDs', { cause: wait.signal?.reason });
  }
}

/** True once every served version of the CRD answers a list (`limit=1`) with 200. */
async function versionsServed(endpoint: ApiServerEndpoint, crd: CustomResourceDefinitionLike, signal?: AbortSignal): Promise<boolean> {
  const group = crd.spec?.group ?? '';
  const plural = crd.spec?.names?.plural ?? '';
  for (const version of crd.spec?.versions ?? []) {
    if (version.served === false) continue;
    const answer = await request(`${endpoint.server}/apis/${group}/${version.name ?? ''}/${plural}?limit=1`, { endpoint, signal });
    if (answer.status !== 200) return false;
  }
  return true;
}
