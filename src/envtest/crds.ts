// envtest's `crds`: files read and CRDs installed through kube-informer/crd's one path, errors told in envtest's words.

import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import { CustomResourceDefinitionError, ensureCustomResourceDefinitions, waitForCustomResourceDefinitions, type CrdSource } from '../crd/ensure.js';
import { CustomResourceDefinitionFileError, readCustomResourceDefinitionFiles } from '../crd/files.js';
import { TestEnvironmentError } from './errors.js';

/** A CRD for envtest's `crds`: one held in memory (a definition or a CRD object), or the path of a file or directory of CRDs. */
export type TestEnvironmentCrd = CrdSource | string;

/** How long, at most, and on which clock the installs wait. */
export interface CrdWait {
  /** The clock of the waits. */
  clock: Clock;
  /** The clock reading by which every CRD must be established and served. */
  deadline: number;
  /** Cancels the wait. */
  signal?: AbortSignal | undefined;
}

/** How often envtest reads a CRD while it waits: a local server answers at once. */
const POLL_MS = 50;

/**
 * The CRDs of every source, files read before anything starts (a bad file fails the start at once).
 * Throws `InvalidOptionError` naming the option (`label` is `startTestEnvironment: option crds`, the
 * index follows) and the reader's reason: the file, the document and its line.
 */
export function loadCrds(sources: readonly TestEnvironmentCrd[], label: string): CustomResourceDefinition[] {
  return sources.flatMap((source, i) => {
    if (typeof source !== 'string') return [('crd' in source ? source.crd : source) as CustomResourceDefinition];
    try {
      return readCustomResourceDefinitionFiles(source);
    } catch (err) {
      if (!(err instanceof CustomResourceDefinitionFileError)) throw err;
      throw new InvalidOptionError(`${label}[${i}]: ${err.message}`);
    }
  });
}

/**
 * Installs the CRDs (server-side apply: created, or updated to this spec when present) and waits until
 * each is `Established` and every served version answers a list. Throws `ENVTEST_CRD_REJECTED` quoting
 * the server when it refuses one (a non-structural schema, a bad name), when its names conflict, or
 * when the wait outlasts the deadline.
 */
export async function installCrds(kubeConfig: KubeConfig, crds: readonly CustomResourceDefinition[], wait: CrdWait): Promise<string[]> {
  const installed = await envtestErrors(() => ensureCustomResourceDefinitions(kubeConfig, crds, options(wait)));
  return installed.map((crd) => crd.metadata?.name ?? '');
}

/** Waits, writing nothing, until every CRD is `Established` and served again (after a restart). */
export async function waitEstablished(kubeConfig: KubeConfig, crds: readonly CustomResourceDefinition[], wait: CrdWait): Promise<void> {
  await envtestErrors(() => waitForCustomResourceDefinitions(kubeConfig, crds, options(wait)));
}

function options(wait: CrdWait): { clock: Clock; timeoutMs: number; pollIntervalMs: number; signal?: AbortSignal } {
  const timeoutMs = Math.max(1, wait.deadline - wait.clock.now());
  return { clock: wait.clock, timeoutMs, pollIntervalMs: POLL_MS, ...(wait.signal === undefined ? {} : { signal: wait.signal }) };
}

async function envtestErrors<R>(install: () => Promise<R>): Promise<R> {
  try {
    return await install();
  } catch (err) {
    if (err instanceof AbortedError) throw err;
    if (err instanceof CustomResourceDefinitionError) {
      throw new TestEnvironmentError(
        'ENVTEST_CRD_REJECTED',
        `envtest: ${err.message}. ` + // the server's message already lists its field errors
          'Fix the CRD (a schema must be structural: every field typed, `x-kubernetes-preserve-unknown-fields` where it is open); `kubectl apply --dry-run=server -f <file>` against any cluster shows the same message, or raise startTimeoutMs when it was not Established in time.',
        { cause: err },
      );
    }
    throw new TestEnvironmentError('ENVTEST_CRD_REJECTED', `envtest: the CRDs could not be installed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
