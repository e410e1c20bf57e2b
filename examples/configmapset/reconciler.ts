// The ConfigMapSet operator's controller, described once: what it watches and writes (for the builder) and its reconcile, shared by the single-cluster operator (operator.ts) and the fleet (fleet.ts).
//
// Not run on its own: operator.ts builds it with `Controller.for(factory, ...)`, fleet.ts with
// `MultiClusterController.for(...)`; the reconcile reads the request's cluster from `ctx.cluster`.

import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { type DeepReadonly, type JsonPatchOperation, resources } from '../../src/index.js';
import {
  Action,
  type ControllerBuilder,
  finalizer,
  type Predicate,
  predicates,
  type ReconcileClient,
  type ReconcileContext,
  TerminalError,
  type WatchOptions,
} from '../../src/controller.js';
import type { EventRecorder } from '../../src/operations/index.js';
import { API_VERSION, configMapSets, FINALIZER, SET_LABEL, type ConfigMapSet, type ConfigMapSetStatus } from './crd.js';
import { getControllerOf, isInvalid, isNotFound, setCondition, setControllerReference, type ApplyConfiguration, type ApplyIdentity } from '../../src/objects.js';
import type { ExternalRegistry, RegistryRecord } from './registry.js';

/** The ConfigMap a set keeps for one of its names: `<set>-<name>`. */
export const configMapName = (setName: string, name: string): string => `${setName}-${name}`;

/** The names a set asks for, each once, in spec order. */
export function desiredNames(set: DeepReadonly<ConfigMapSet>): string[] {
  return [...new Set(set.spec.names)];
}

/**
 * The ConfigMap `name` as `set` wants it, as a server-side apply configuration: the fields the
 * operator owns — the set's data, the set's label, and a controller owner reference to the set (what
 * `ctx.children` and the controller's `owns` follow back to the set). A key the operator applied
 * before and `set` no longer has is removed by the apply; a key someone else added stays theirs.
 */
export function desiredConfigMap(set: DeepReadonly<ConfigMapSet>, name: string): ApplyConfiguration<ConfigMap> {
  const config: ConfigMap & ApplyIdentity = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: set.metadata?.namespace, labels: { [SET_LABEL]: set.metadata?.name ?? '' } },
    data: { ...set.spec.data },
  };
  // Objects of a list (the cache's first fill) carry no apiVersion and kind: the owner's identity is the descriptor's.
  return setControllerReference({ apiVersion: API_VERSION, kind: configMapSets.kind, metadata: set.metadata }, config);
}

/**
 * Whether a ConfigMap visibly holds what `desired` says: the set's label and every key of the set's
 * data with its value. Other keys are someone else's (server-side apply leaves them alone) — or the
 * operator's own from an older spec, which only a spec change leaves behind: the reconcile of a new
 * generation applies every ConfigMap, and the apply removes them.
 */
export function configMapMatches(actual: DeepReadonly<ConfigMap>, desired: ApplyConfiguration<ConfigMap>): boolean {
  const data = Object.entries(desired.data ?? {});
  return actual.metadata?.labels?.[SET_LABEL] === desired.metadata.labels?.[SET_LABEL] && data.every(([k, v]) => actual.data?.[k] === v);
}

/**
 * The watch of the sets (`Controller.for`'s options): the predicate `generationChanged`, so the
 * operator's own status writes do not wake it (the runtime passes a change of the finalizers or the
 * deletionTimestamp whatever the predicates), after `seen` when given — a predicate that passes
 * everything, told of each event of the sets.
 */
export function configMapSetWatch(seen?: () => void): WatchOptions<ConfigMapSet> {
  return { predicates: [...counting<ConfigMapSet>(seen), predicates.generationChanged] };
}

/**
 * The rest of the controller's description, on either builder (`Controller.for(factory, ...)` or
 * `MultiClusterController.for(...)`): it owns ConfigMaps (no predicate: any change is repaired; `seen`
 * told of each event), and what the reconcile writes — ctx.client refuses anything else before
 * sending it: the ConfigMaps read (a name taken by others?), applied (which may create them) and
 * deleted; the finalizer by JSON Patch; the status by apply through its subresource.
 */
export function describeConfigMapSetController<C>(builder: ControllerBuilder<ConfigMapSet, never, C>, seen?: () => void): ControllerBuilder<ConfigMapSet, never, C> {
  return builder
    .owns(resources.configmaps, { predicates: counting<ConfigMap>(seen) })
    .uses(resources.configmaps, ['get', 'create', 'patch', 'delete'])
    .uses(configMapSets, ['patch'])
    .uses(configMapSets, ['patch'], { subresource: 'status' });
}

/** Counting is a predicate that passes everything: predicates see each event of their resource once. */
function counting<R>(seen: (() => void) | undefined): Array<Predicate<R>> {
  return seen === undefined ? [] : [() => (seen(), true)];
}

/** Options of a {@link ConfigMapSetReconciler}. */
export interface ConfigMapSetReconcilerOptions {
  /** The external registry of the request's cluster (`undefined`: a single-cluster controller). Required. */
  registry: (cluster: string | undefined) => ExternalRegistry;
  /** The Event recorder of the request's cluster; `undefined` records no Event. Required. */
  events: (cluster: string | undefined) => EventRecorder | undefined;
  /** Told about each thing the operator does, as one line (prefixed `<cluster>: ` in a fleet). Default: nothing. */
  onEvent?: (line: string) => void;
  /** Told when a reconcile of a set starts and ends, with the request's cluster. Default: nothing. */
  onReconcile?: (key: string, phase: 'start' | 'end', cluster: string | undefined) => void;
}

/** What the reconcile did, counted. */
export interface ConfigMapSetCounts {
  /** ConfigMaps created, replaced (the spec's data changed, or a hand edit undone) and deleted. */
  configMaps: { created: number; updated: number; deleted: number };
  /** Status writes through the status subresource. */
  statusWrites: number;
  /** Finalizers added to sets and removed from them (after a cleanup). */
  finalizers: { added: number; removed: number };
  /** Cleanups that completed (the finalizer's removal may still have failed after one). */
  cleanups: number;
  /** Records written to and removed from the external registry. */
  registry: { written: number; removed: number };
}

/**
 * The ConfigMapSet reconcile (see `ConfigMapSetOperator` for what it keeps). Every write goes through
 * the reconcile's bound client (`ctx.client`), which addresses the request's cluster and records the
 * write for read-your-writes; the registry and the Events are the request's cluster's.
 */
export class ConfigMapSetReconciler {
  readonly #options: ConfigMapSetReconcilerOptions;
  readonly #counts: ConfigMapSetCounts = {
    configMaps: { created: 0, updated: 0, deleted: 0 },
    statusWrites: 0,
    finalizers: { added: 0, removed: 0 },
    cleanups: 0,
    registry: { written: 0, removed: 0 },
  };

  constructor(options: ConfigMapSetReconcilerOptions) {
    this.#options = options;
  }

  /** The counts so far (a copy). */
  counts(): ConfigMapSetCounts {
    const c = this.#counts;
    return { configMaps: { ...c.configMaps }, statusWrites: c.statusWrites, finalizers: { ...c.finalizers }, cleanups: c.cleanups, registry: { ...c.registry } };
  }

  /** The reconcile of one set (the builder's `build(reconcile)`). */
  async reconcile(ctx: ReconcileContext<ConfigMapSet>): Promise<Action> {
    this.#options.onReconcile?.(ctx.key, 'start', ctx.cluster);
    try {
      return await this.#finalize(ctx);
    } finally {
      this.#options.onReconcile?.(ctx.key, 'end', ctx.cluster);
    }
  }

  #log(ctx: ReconcileContext<ConfigMapSet>, line: string): void {
    this.#options.onEvent?.(ctx.cluster === undefined ? line : `${ctx.cluster}: ${line}`);
  }

  #finalize(ctx: ReconcileContext<ConfigMapSet>): Promise<Action> {
    // The bound client records both of finalizer()'s patches (read-your-writes); this wrapper only counts them.
    const sets = ctx.client(configMapSets);
    const counted: Pick<ReconcileClient<ConfigMapSet>, 'patch'> = {
      patch: async (name, namespace, patch, type, signal) => {
        const result = await sets.patch(name, namespace, patch, type, signal);
        const adding = (patch as JsonPatchOperation[]).some((p) => p.op === 'add');
        this.#counts.finalizers[adding ? 'added' : 'removed']++;
        this.#log(ctx, `${adding ? 'added the finalizer to' : 'removed the finalizer from'} ${ctx.key}`);
        return result;
      },
    };
    return finalizer<ConfigMapSet>(counted, FINALIZER, ctx, { apply: (set, signal) => this.#apply(set, ctx, signal), cleanup: (set, signal) => this.#cleanup(set, ctx, signal) });
  }

  /** The set is live and carries the finalizer: the registry record, the ConfigMaps, the status. */
  async #apply(set: DeepReadonly<ConfigMapSet>, ctx: ReconcileContext<ConfigMapSet>, signal: AbortSignal): Promise<Action> {
    const registry = this.#options.registry(ctx.cluster);
    const wanted = desiredNames(set).map((n) => configMapName(ctx.name, n));
    const entry: RegistryRecord = { namespace: ctx.namespace, name: ctx.name, uid: set.metadata?.uid ?? '', configMaps: wanted };
    const registered = await registry.get(ctx.key, signal);
    if (registered === undefined || JSON.stringify(registered) !== JSON.stringify(entry)) {
      await registry.put(ctx.key, entry, signal);
      this.#counts.registry.written++;
      this.#log(ctx, `registered ${ctx.key} in the external registry (${wanted.length} ConfigMaps)`);
    }

    const children = new Map(ctx.children(resources.configmaps).map((cm) => [cm.metadata?.name ?? '', cm]));
    // A spec not observed yet: apply every ConfigMap (an apply that changes nothing writes nothing).
    const newSpec = set.status?.observedGeneration !== set.metadata?.generation;
    const taken: string[] = [];
    let ready = 0;
    for (const name of wanted) {
      const current = children.get(name);
      if (current === undefined && (await this.#takenByOthers(set, name, ctx))) {
        taken.push(name);
        continue;
      }
      ready++;
      const desired = desiredConfigMap(set, name);
      if (current !== undefined && !newSpec && configMapMatches(current, desired)) continue;
      let written: ConfigMap;
      try {
        // force: a value someone edited by hand is the operator's again (a key they added stays theirs).
        written = await ctx.client(resources.configmaps).apply(desired, { force: true });
      } catch (err) {
        // 422: the API refuses the ConfigMap (a name past 253 characters, data past 1 MiB): only a change
        // of the set can fix that, so no retry with backoff — the set's next change reconciles it.
        if (isInvalid(err)) throw new TerminalError(`ConfigMap ${ctx.namespace}/${name} of ${ctx.key} is invalid`, { cause: err });
        throw err;
      }
      // An apply that changed nothing (a key someone else added is all that differs) keeps the resourceVersion.
      if (written.metadata?.resourceVersion === current?.metadata?.resourceVersion) continue;
      this.#counts.configMaps[current === undefined ? 'created' : 'updated']++;
      this.#log(ctx, `${current === undefined ? 'created' : 'updated'} ConfigMap ${ctx.namespace}/${name}`);
    }
    const keep = new Set(wanted);
    for (const [name, child] of children) if (!keep.has(name)) await this.#deleteConfigMap(child, ctx);

    if (taken.length > 0) {
      // Fire-and-forget: repeats of this requeue become one Event with a count.
      this.#options.events(ctx.cluster)?.event(set, { type: 'Warning', reason: 'NameTaken', action: 'CreateConfigMap', note: `ConfigMaps not owned by this set have the names ${taken.join(', ')}` });
    }
    await this.#writeStatus(set, ready, taken, ctx);
    // A taken name may be freed by its owner: look again now and then (its delete is no event of ours).
    return taken.length > 0 ? Action.requeueAfter(10_000) : Action.done();
  }

  /**
   * Whether a ConfigMap named `name` that this set does not control exists: the operator never takes
   * one over (an apply would). Asked of the server, not the cache, when the set has no such child —
   * on its creation, mostly. A ConfigMap created by someone else in the round trip between this read
   * and the apply would still be adopted.
   */
  async #takenByOthers(set: DeepReadonly<ConfigMapSet>, name: string, ctx: ReconcileContext<ConfigMapSet>): Promise<boolean> {
    try {
      const existing = await ctx.client(resources.configmaps).get(name, ctx.namespace);
      return getControllerOf(existing)?.uid !== set.metadata?.uid;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** The set is being deleted: remove its external record, then delete its ConfigMaps. The finalizer goes after this resolved. */
  async #cleanup(set: DeepReadonly<ConfigMapSet>, ctx: ReconcileContext<ConfigMapSet>, signal: AbortSignal): Promise<Action> {
    await this.#options.registry(ctx.cluster).remove(ctx.key, signal);
    this.#counts.registry.removed++;
    const children = ctx.children(resources.configmaps);
    for (const child of children) await this.#deleteConfigMap(child, ctx);
    this.#counts.cleanups++;
    this.#options.events(ctx.cluster)?.event(set, { type: 'Normal', reason: 'CleanedUp', action: 'Finalize', note: `registry record removed, ${children.length} ConfigMaps deleted` });
    this.#log(ctx, `cleaned up ${ctx.key}: registry record removed, ${children.length} ConfigMaps deleted`);
    return Action.done();
  }

  /**
   * Deletes an owned ConfigMap — only that object (uid precondition); already gone is fine. The bound
   * client records the delete: the set's next reconcile waits until the cache no longer lists it.
   */
  async #deleteConfigMap(child: DeepReadonly<ConfigMap>, ctx: ReconcileContext<ConfigMapSet>): Promise<void> {
    const name = child.metadata?.name ?? '';
    try {
      await ctx.client(resources.configmaps).delete(name, ctx.namespace, { preconditions: { uid: child.metadata?.uid } });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.#counts.configMaps.deleted++;
    this.#log(ctx, `deleted ConfigMap ${ctx.namespace}/${name}`);
  }

  /** Applies the status through the status subresource when it differs from what the set shows. */
  async #writeStatus(set: DeepReadonly<ConfigMapSet>, ready: number, taken: string[], ctx: ReconcileContext<ConfigMapSet>): Promise<void> {
    const generation = set.metadata?.generation;
    const ok = taken.length === 0;
    const { conditions, changed } = setCondition(set.status?.conditions, {
      type: 'Ready',
      status: ok ? 'True' : 'False',
      reason: ok ? 'AllConfigMapsWritten' : 'NameTaken',
      message: ok ? `${ready} ConfigMaps hold the set's data` : `ConfigMaps not owned by this set have the names ${taken.join(', ')}`,
      observedGeneration: generation,
    });
    if (!changed && set.status?.observedGeneration === generation && set.status?.ready === ready) return;
    const status: ConfigMapSetStatus = { observedGeneration: generation, ready, conditions };
    const config: ApplyConfiguration<ConfigMapSet> = { apiVersion: API_VERSION, kind: configMapSets.kind, metadata: { name: ctx.name, namespace: ctx.namespace }, status };
    await ctx.client(configMapSets).applyStatus(config, { force: true });
    this.#counts.statusWrites++;
    this.#log(ctx, `status of ${ctx.key}: ready ${ready}/${ready + taken.length}, observedGeneration ${generation ?? '-'}`);
  }
}
