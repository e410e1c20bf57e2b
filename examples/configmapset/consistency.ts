// The ConfigMapSet operator's consistency check: the server's sets, ConfigMaps and the external registry, compared with what the sets ask for.
//
// Not run on its own: the scenario (main.ts), the demo and the tests use it. It reads the API server
// over HTTP (no informer cache involved) and the registry as it is now.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newListWatch, realClock, resources, sleep, type ResourceDescriptor } from '../../src/index.js';
import { API_VERSION, configMapSets, FINALIZER, SET_LABEL, type ConfigMapSet } from './crd.js';
import { configMapName, desiredNames } from './reconciler.js';
import type { ExternalRegistry, RegistryRecord } from './registry.js';

/** The state the check compares: one namespace's sets and ConfigMaps, and the registry's records of that namespace. */
export interface ConfigMapSetSnapshot {
  /** Every ConfigMapSet of the namespace. */
  sets: ConfigMapSet[];
  /** Every ConfigMap of the namespace. */
  configMaps: ConfigMap[];
  /** The registry's records of sets in the namespace, by key. */
  registry: Record<string, RegistryRecord>;
}

/** Lists the namespace's sets and ConfigMaps from the API server (a fresh, consistent read each) and reads the registry. */
export async function fetchSnapshot(kubeConfig: KubeConfig, namespace: string, registry: ExternalRegistry, signal?: AbortSignal): Promise<ConfigMapSetSnapshot> {
  const list = async <T>(resource: ResourceDescriptor<T>): Promise<T[]> => {
    const lw = newListWatch<T>(kubeConfig, resource, { namespace });
    try {
      return (await lw.list({ resourceVersion: '' }, signal ?? new AbortController().signal)).items;
    } finally {
      lw.close();
    }
  };
  const [sets, configMaps, records] = await Promise.all([list(configMapSets), list(resources.configmaps), registry.all(signal)]);
  return { sets, configMaps, registry: Object.fromEntries(Object.entries(records).filter(([, r]) => r.namespace === namespace)) };
}

/** The uid of a ConfigMap's controlling ConfigMapSet, or `undefined` when no set controls it. */
function controllingSetUid(cm: ConfigMap): string | undefined {
  const ref = cm.metadata?.ownerReferences?.find((r) => r.controller === true);
  return ref !== undefined && ref.kind === 'ConfigMapSet' && ref.apiVersion.split('/')[0] === API_VERSION.split('/')[0] ? ref.uid : undefined;
}

const text = (v: unknown): string => JSON.stringify(v ?? null);

/**
 * The first way the snapshot differs from converged, as one readable line, or `undefined` when
 * converged: every set is live (no deletion pending), carries the finalizer, owns exactly the
 * ConfigMaps `<set>-<name>` of its `spec.names`, each holding `spec.data` — the operator's apply
 * owning exactly its keys; a key someone else added may stay, it is theirs — has
 * `status.observedGeneration == metadata.generation`, `status.ready == names.length` and `Ready=True`,
 * and has its record in the registry; no ConfigMap is controlled by a set that does not exist
 * (orphaned) and the registry has no record of one (leaked).
 */
export function firstDifference(snapshot: ConfigMapSetSnapshot): string | undefined {
  const sets = [...snapshot.sets].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const liveUids = new Set(sets.map((s) => s.metadata?.uid));
  for (const set of sets) {
    const key = `${set.metadata?.namespace}/${set.metadata?.name}`;
    const meta = set.metadata ?? {};
    if (meta.deletionTimestamp) return `set ${key} is still being deleted (finalizers ${text(meta.finalizers)})`;
    if (!(meta.finalizers ?? []).includes(FINALIZER)) return `set ${key} does not carry the finalizer ${FINALIZER}`;
    const wanted = desiredNames(set).map((n) => configMapName(meta.name ?? '', n));
    const owned = new Map(snapshot.configMaps.filter((cm) => controllingSetUid(cm) === meta.uid).map((cm) => [cm.metadata?.name ?? '', cm]));
    for (const name of wanted) {
      const cm = owned.get(name);
      if (cm === undefined) return `set ${key}: its ConfigMap ${name} is missing`;
      const wrong = Object.entries(set.spec.data ?? {}).find(([k, v]) => cm.data?.[k] !== v);
      if (wrong !== undefined) return `set ${key}: ConfigMap ${name} has data ${text(cm.data)}, the spec says ${text(set.spec.data)}`;
      const applied = operatorDataKeys(cm);
      const specKeys = Object.keys(set.spec.data ?? {}).sort();
      if (applied !== undefined && text(applied) !== text(specKeys)) return `set ${key}: ConfigMap ${name}: the operator owns the data keys ${text(applied)}, the spec has ${text(specKeys)}`;
    }
    const extra = [...owned.keys()].filter((n) => !wanted.includes(n));
    if (extra.length > 0) return `set ${key} still owns ConfigMaps it no longer lists: ${extra.join(', ')}`;
    const status = set.status ?? {};
    if (status.observedGeneration !== meta.generation) return `set ${key}: status.observedGeneration ${status.observedGeneration} != generation ${meta.generation}`;
    if (status.ready !== wanted.length) return `set ${key}: status.ready ${status.ready} != ${wanted.length} names`;
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True') return `set ${key}: condition Ready is ${ready?.status ?? 'missing'} (${ready?.message ?? ''})`;
    const entry = snapshot.registry[key];
    if (entry === undefined) return `set ${key} has no record in the external registry`;
    if (entry.uid !== meta.uid || text(entry.configMaps) !== text(wanted)) return `set ${key}: its registry record ${text(entry)} is out of date`;
  }
  for (const cm of snapshot.configMaps) {
    const uid = controllingSetUid(cm);
    if (uid !== undefined && !liveUids.has(uid)) return `ConfigMap ${cm.metadata?.namespace}/${cm.metadata?.name} is orphaned: its set (uid ${uid}) is gone`;
  }
  const liveKeys = new Set(sets.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`));
  const leaked = Object.keys(snapshot.registry).filter((k) => !liveKeys.has(k));
  if (leaked.length > 0) return `the external registry still has records of deleted sets: ${leaked.join(', ')}`;
  return undefined;
}

interface Fields {
  [step: string]: Fields | undefined;
}

/**
 * The data keys the operator's server-side apply owns in `cm` (sorted): those of the `Apply` entry of
 * `managedFields` that owns the set label. Keys other managers own (a hand edit's) are theirs and
 * may stay. `undefined` when the ConfigMap has no managedFields (a server that keeps none).
 */
function operatorDataKeys(cm: ConfigMap): string[] | undefined {
  if (cm.metadata?.managedFields === undefined) return undefined;
  const entry = cm.metadata.managedFields.find((e) => e.operation === 'Apply' && (e.fieldsV1 as Fields | undefined)?.['f:metadata']?.['f:labels']?.[`f:${SET_LABEL}`] !== undefined);
  const data = (entry?.fieldsV1 as Fields | undefined)?.['f:data'] ?? {};
  return Object.keys(data).filter((k) => k.startsWith('f:')).map((k) => k.slice(2)).sort();
}

/** What {@link awaitConverged} found. */
export interface ConvergenceResult {
  /** The last difference seen; `undefined` = converged. */
  difference: string | undefined;
  /** How many snapshots were compared. */
  checks: number;
  /** How long the wait took, in ms. */
  ms: number;
}

/** Options of {@link awaitConverged}. */
export interface AwaitConvergedOptions {
  /** The cluster. */
  kubeConfig: KubeConfig;
  /** The namespace of the sets. */
  namespace: string;
  /** The operator's registry. */
  registry: ExternalRegistry;
  /** Give up after this long, in ms. Default 10 000. */
  timeoutMs?: number;
  /** The pause between two checks, in ms. Default 20. */
  intervalMs?: number;
  /** Stops the wait (resolves with the last difference). */
  signal?: AbortSignal;
  /** An extra condition on the snapshot (a step's own expectation); returns a difference or `undefined`. */
  expect?: (snapshot: ConfigMapSetSnapshot) => string | undefined;
}

/**
 * Checks until the snapshot shows no difference (the operator acts a moment after a change, so only a
 * difference that outlives `timeoutMs` counts) and resolves with the outcome; never rejects for a
 * difference, only when reading fails.
 */
export async function awaitConverged(options: AwaitConvergedOptions): Promise<ConvergenceResult> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 10_000;
  let checks = 0;
  for (;;) {
    const snapshot = await fetchSnapshot(options.kubeConfig, options.namespace, options.registry, options.signal);
    checks++;
    const difference = firstDifference(snapshot) ?? options.expect?.(snapshot);
    const ms = Math.round(performance.now() - started);
    if (difference === undefined || ms >= timeoutMs) return { difference, checks, ms };
    if (!(await sleep(realClock, options.intervalMs ?? 20, options.signal))) return { difference, checks, ms };
  }
}
