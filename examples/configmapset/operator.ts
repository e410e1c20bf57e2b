// The ConfigMapSet operator: one Controller over ConfigMapSets that owns ConfigMaps, writes status, and cleans up an external registry through a finalizer.
//
// Not run on its own: `npx tsx examples/configmapset/main.ts` runs it through a scenario. See examples/README.md.

import type { KubeConfig } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import {
  type DeepReadonly,
  type JsonPatchOperation,
  type LoggerOption,
  resources,
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
  stripManagedFields,
} from '../../src/index.js';
import {
  Action,
  Controller,
  type ControllerOptions,
  type ControllerStats,
  finalizer,
  type Predicate,
  predicates,
  type ReconcileClient,
  type ReconcileContext,
  type RunWhileLeadingOptions,
  TerminalError,
} from '../../src/controller.js';
import {
  DriftAudit,
  EventRecorder,
  Manager,
  type ManagerOptions,
  prometheusControllerMetricsProvider,
  registerInformerMetrics,
  type InformerMetricsRegistration,
} from '../../src/operations/index.js';
import { API_VERSION, configMapSets, FINALIZER, SET_LABEL, type ConfigMapSet, type ConfigMapSetStatus } from './crd.js';
import { getControllerOf, isInvalid, isNotFound, setCondition, setControllerReference, type ApplyConfiguration, type ApplyIdentity } from '../../src/objects.js';
import type { ExternalRegistry, RegistryRecord } from './registry.js';
import type { ShardRing } from '../../src/sharding/index.js';
import type { WebhookServer } from '../../src/webhook/index.js';

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

/** Options of a {@link ConfigMapSetOperator}. */
export interface ConfigMapSetOperatorOptions {
  /** The external system each set has a record in. Required. */
  registry: ExternalRegistry;
  /** Watch only this namespace. Default: every namespace. */
  namespace?: string;
  /** Sets reconciled at once. Default 2. */
  concurrency?: number;
  /** The controller's and the informers' logger. Default `console`. */
  logger?: LoggerOption;
  /** Told about each thing the operator does, as one line. Default: nothing. */
  onEvent?: (line: string) => void;
  /** The informers' options (tests shorten the reflector's backoff). Default: the factory's. */
  informerOptions?: SharedInformerFactoryOptions['informerOptions'];
  /**
   * More controller options (`clock`, `onError`, deadlines, the request `priority`, the retries'
   * `rateLimit`, `concurrencyGroups`). Default: the controller's.
   */
  controller?: Pick<ControllerOptions, 'clock' | 'onError' | 'observeTimeoutMs' | 'reconcileTimeoutMs' | 'debounceMs' | 'priority' | 'rateLimit' | 'concurrencyGroups'>;
  /**
   * Run as one replica of a sharded operator on this ring (docs/sharding.md): the sets and their
   * ConfigMaps are cached per owned slot (give the ring `field: 'namespace'` so a set's ConfigMaps share
   * its slot), only the sets of owned slots are reconciled, and the ring runs with the operator (stopped
   * after the controller drained). There are no drift audits then: an audit compares a whole cache with
   * a list. The registry must be shared by the replicas (`DirectoryRegistry`). Default: not sharded.
   */
  sharded?: ShardRing;
  /** Told of every event the informers deliver (an add, update or delete of a set or a ConfigMap). Default: nothing. */
  onInformerEvent?: () => void;
  /** Told when a reconcile of a set starts and ends (an ownership log). Default: nothing. */
  onReconcile?: (key: string, phase: 'start' | 'end') => void;
  /** The informers' connections go through this agent (see `SharedInformerFactoryOptions.agent`). Default: the KubeConfig's. */
  agent?: SharedInformerFactoryOptions['agent'];
  /** The field manager of every write (the controller's `fieldManager`: what `managedFields` shows). Default `'configmapset-operator'`. */
  fieldManager?: string;
  /** Time between drift audits of its two caches, in ms. Default 600 000 (10 minutes). */
  auditIntervalMs?: number;
  /**
   * The operator's webhooks (webhooks.ts: `configMapSetWebhookServer()`), served by its Manager
   * (`webhookServer`) in every replica, leading or not (the API server calls any of them): started
   * first, so it answers before any informer lists a converted version; `/readyz` is 503 until it
   * serves; stopped after the informers, finishing its in-flight reviews. Default: none.
   */
  webhookServer?: WebhookServer;
  /**
   * Reconcile only while holding this lock (`Manager`'s `leaderElection`: the informers, the recorder
   * and the audits run in every replica, a standby is warm). Default: no election.
   */
  leaderElection?: RunWhileLeadingOptions;
  /**
   * Serve `/livez` (`/healthz`), `/readyz` and `/metrics` on this port (`0`: any free one) and host
   * (default loopback) while the operator runs. Default: no probe server.
   */
  probes?: { port: number; host?: string };
  /**
   * The Manager's waits: for the caches (`cacheSyncTimeoutMs`, `cacheSyncWarningIntervalMs`) and for the
   * stop (`gracefulShutdownTimeoutMs`), and its `tracerProvider` (OpenTelemetry: a span per reconcile, a
   * child per write — docs/tracing.md). Default: the Manager's (120 s with a warning every 30 s; 30 s;
   * no tracing).
   */
  manager?: Pick<ManagerOptions, 'cacheSyncTimeoutMs' | 'cacheSyncWarningIntervalMs' | 'gracefulShutdownTimeoutMs' | 'tracerProvider'>;
}

/** Counters of a {@link ConfigMapSetOperator}, with the controller's. */
export interface ConfigMapSetOperatorStats extends ControllerStats {
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
 * The ConfigMapSet operator. For each set it keeps one ConfigMap `<set>-<name>` per `spec.names` entry
 * with `spec.data` (created, repaired when edited or deleted by hand, deleted when no longer listed),
 * a record in the external registry, and `status` (`observedGeneration`, `ready`, a `Ready` condition).
 * The finalizer `examples.kube-informer.dev/cleanup` makes deletion wait for the cleanup: the registry
 * record removed and the ConfigMaps deleted explicitly (a control plane without kube-controller-manager
 * has no garbage collector to follow the owner references).
 *
 * Every write goes through the reconcile's bound client (`ctx.client`): the ConfigMaps and the status
 * by server-side apply under the field manager `configmapset-operator`, the finalizer by JSON Patch,
 * the deletes with a uid precondition — each recorded for read-your-writes, so the next reconcile of
 * the set waits until the caches saw it, with no bookkeeping of the operator's. The primary's
 * predicate is `generationChanged`, so the operator's own status writes do not wake it (the runtime
 * passes a change of the finalizers or the deletionTimestamp whatever the predicates: `finalizer()`
 * gets past adding its own); the owned ConfigMaps have no predicate: any change is repaired.
 */
export class ConfigMapSetOperator {
  /** The controller (for `runWhileLeading` or its `stats()`). */
  readonly controller: Controller<ConfigMapSet>;
  /** The informer factory of the sets and ConfigMaps. */
  readonly factory: SharedInformerFactory;
  readonly #registry: ExternalRegistry;
  readonly #onEvent: (line: string) => void;
  readonly #counts = {
    configMaps: { created: 0, updated: 0, deleted: 0 },
    statusWrites: 0,
    finalizers: { added: 0, removed: 0 },
    cleanups: 0,
    registry: { written: 0, removed: 0 },
  };
  #started = false;
  readonly #onReconcile: ConfigMapSetOperatorOptions['onReconcile'];
  readonly #metricsRegistration: InformerMetricsRegistration;
  /**
   * The operator's Prometheus metrics, its own registry: controller-runtime's `controller_runtime_*`
   * and `workqueue_*` for the controller, `kube_informer_*` for its informers.
   */
  readonly metrics = new promClient.Registry();
  /** Its Events (`kubectl events`): `NameTaken` when a ConfigMap name belongs to someone else, `CleanedUp` at deletion. */
  readonly events: EventRecorder;
  /** Drift audits of its sets and ConfigMaps caches, repaired by a relist (in its metrics as `kube_informer_drift_*`). */
  readonly audits: readonly DriftAudit[];
  /**
   * The Manager that runs it all ({@link run}): built here, so that what the process needs is known
   * before it runs (`kube-informer rbac` reads it from in-cluster.ts).
   */
  readonly manager: Manager;

  /** Builds the informers and the controller; nothing runs before {@link run}. */
  constructor(kubeConfig: KubeConfig, options: ConfigMapSetOperatorOptions) {
    this.#registry = options.registry;
    this.#onEvent = options.onEvent ?? (() => undefined);
    this.factory = new SharedInformerFactory(kubeConfig, {
      namespace: options.namespace,
      transform: stripManagedFields,
      logger: options.logger,
      informerOptions: options.informerOptions,
      agent: options.agent,
    });
    this.#onReconcile = options.onReconcile;
    // Counting is a predicate that passes everything: predicates see each event of their resource once.
    const seen = options.onInformerEvent;
    const counting = <R>(): Array<Predicate<R>> => (seen === undefined ? [] : [() => (seen(), true)]);
    this.controller = Controller.for(this.factory, configMapSets, { predicates: [...counting<ConfigMapSet>(), predicates.generationChanged] })
      .owns(resources.configmaps, { predicates: counting<ConfigMap>() })
      // What the reconcile writes (ctx.client refuses anything else before sending it): the ConfigMaps read
      // (a name taken by others?), applied (which may create them) and deleted; the finalizer by JSON Patch;
      // the status by apply through its subresource. Leases and Events are the Manager's and the recorder's.
      .uses(resources.configmaps, ['get', 'create', 'patch', 'delete'])
      .uses(configMapSets, ['patch'])
      .uses(configMapSets, ['patch'], { subresource: 'status' })
      .build((_key, ctx) => this.#reconcile(ctx), {
        name: 'configmapsets',
        concurrency: options.concurrency ?? 2,
        logger: options.logger,
        metricsProvider: prometheusControllerMetricsProvider(promClient, { registry: this.metrics }),
        fieldManager: options.fieldManager ?? 'configmapset-operator',
        ...options.controller,
        sharded: options.sharded,
      });
    // Its Events go to the sets' namespace: one namespace when it watches one (a Role), else any (a ClusterRole).
    this.events = new EventRecorder(kubeConfig, {
      reportingController: 'examples.kube-informer.dev/configmapset-operator',
      logger: options.logger,
      namespaces: options.namespace === undefined ? undefined : [options.namespace],
    });
    const audit = (resource: typeof configMapSets | typeof resources.configmaps): DriftAudit =>
      new DriftAudit(kubeConfig, this.factory.forResource<unknown>(resource), {
        resource,
        namespace: options.namespace,
        intervalMs: options.auditIntervalMs,
        repair: true,
        logger: options.logger,
      });
    this.audits = options.sharded === undefined ? [audit(configMapSets), audit(resources.configmaps)] : [];
    const rings = options.sharded === undefined ? [] : [options.sharded];
    this.#metricsRegistration = registerInformerMetrics(promClient, this.factory, { registry: this.metrics, audits: this.audits, rings });
    // The recorder, the audits and the shard ring run in every replica and stop after the controller
    // drained (the ring releases its slots only then); the Manager runs the webhook server around them.
    this.manager = new Manager(this.factory, {
      controllers: [this.controller],
      runnables: [this.events, ...this.audits, ...rings],
      webhookServer: options.webhookServer,
      leaderElection: options.leaderElection,
      probes: options.probes,
      rings: rings.length === 0 ? undefined : rings,
      metrics: this.metrics,
      logger: options.logger,
      ...options.manager,
    });
  }

  /**
   * Runs the informers and the controller until `signal` aborts, through its {@link manager}: under
   * leader election when `leaderElection` was given (the informers run all along: a standby is warm),
   * with `/livez`, `/readyz` and `/metrics` on a probe server when `probes` was given, and the webhook
   * server when one was given.
   * Rejects when a cache cannot sync, an informer fails or the controller fails. Runs once: a restart is
   * a new operator.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('ConfigMapSetOperator.run was called already: create a new operator to run again');
    this.#started = true;
    try {
      await this.manager.run(signal);
    } finally {
      this.#metricsRegistration.close();
    }
  }

  /** The probe server's URL while it runs (`probes` given). */
  get probeUrl(): string | undefined {
    return this.manager.probeUrl;
  }

  /** Counters so far. */
  stats(): ConfigMapSetOperatorStats {
    const c = this.#counts;
    return {
      ...this.controller.stats(),
      configMaps: { ...c.configMaps },
      statusWrites: c.statusWrites,
      finalizers: { ...c.finalizers },
      cleanups: c.cleanups,
      registry: { ...c.registry },
    };
  }

  async #reconcile(ctx: ReconcileContext<ConfigMapSet>): Promise<Action> {
    this.#onReconcile?.(ctx.key, 'start');
    try {
      return await this.#finalize(ctx);
    } finally {
      this.#onReconcile?.(ctx.key, 'end');
    }
  }

  #finalize(ctx: ReconcileContext<ConfigMapSet>): Promise<Action> {
    // The bound client records both of finalizer()'s patches (read-your-writes); this wrapper only counts them.
    const sets = ctx.client(configMapSets);
    const counted: Pick<ReconcileClient<ConfigMapSet>, 'patch'> = {
      patch: async (name, namespace, patch, type, signal) => {
        const result = await sets.patch(name, namespace, patch, type, signal);
        const adding = (patch as JsonPatchOperation[]).some((p) => p.op === 'add');
        this.#counts.finalizers[adding ? 'added' : 'removed']++;
        this.#onEvent(`${adding ? 'added the finalizer to' : 'removed the finalizer from'} ${ctx.key}`);
        return result;
      },
    };
    return finalizer<ConfigMapSet>(counted, FINALIZER, ctx, { apply: (set, signal) => this.#apply(set, ctx, signal), cleanup: (set, signal) => this.#cleanup(set, ctx, signal) });
  }

  /** The set is live and carries the finalizer: the registry record, the ConfigMaps, the status. */
  async #apply(set: DeepReadonly<ConfigMapSet>, ctx: ReconcileContext<ConfigMapSet>, signal: AbortSignal): Promise<Action> {
    const wanted = desiredNames(set).map((n) => configMapName(ctx.name, n));
    const entry: RegistryRecord = { namespace: ctx.namespace, name: ctx.name, uid: set.metadata?.uid ?? '', configMaps: wanted };
    const registered = await this.#registry.get(ctx.key, signal);
    if (registered === undefined || JSON.stringify(registered) !== JSON.stringify(entry)) {
      await this.#registry.put(ctx.key, entry, signal);
      this.#counts.registry.written++;
      this.#onEvent(`registered ${ctx.key} in the external registry (${wanted.length} ConfigMaps)`);
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
      this.#onEvent(`${current === undefined ? 'created' : 'updated'} ConfigMap ${ctx.namespace}/${name}`);
    }
    const keep = new Set(wanted);
    for (const [name, child] of children) if (!keep.has(name)) await this.#deleteConfigMap(child, ctx);

    if (taken.length > 0) {
      // Fire-and-forget: repeats of this requeue become one Event with a count.
      this.events.event(set, { type: 'Warning', reason: 'NameTaken', action: 'CreateConfigMap', note: `ConfigMaps not owned by this set have the names ${taken.join(', ')}` });
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
    await this.#registry.remove(ctx.key, signal);
    this.#counts.registry.removed++;
    const children = ctx.children(resources.configmaps);
    for (const child of children) await this.#deleteConfigMap(child, ctx);
    this.#counts.cleanups++;
    this.events.event(set, { type: 'Normal', reason: 'CleanedUp', action: 'Finalize', note: `registry record removed, ${children.length} ConfigMaps deleted` });
    this.#onEvent(`cleaned up ${ctx.key}: registry record removed, ${children.length} ConfigMaps deleted`);
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
    this.#onEvent(`deleted ConfigMap ${ctx.namespace}/${name}`);
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
    this.#onEvent(`status of ${ctx.key}: ready ${ready}/${ready + taken.length}, observedGeneration ${generation ?? '-'}`);
  }
}
