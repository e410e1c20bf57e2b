// The ConfigMapSet operator: one Controller over ConfigMapSets that owns ConfigMaps, writes status, and cleans up an external registry through a finalizer.
//
// Not run on its own: `npx tsx examples/configmapset/main.ts` runs it through a scenario. See examples/README.md.

import type { KubeConfig } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import {
  type LoggerOption,
  resources,
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
  stripManagedFields,
} from '../../src/index.js';
import { Controller, type ControllerOptions, type ControllerStats, type RunWhileLeadingOptions } from '../../src/controller.js';
import {
  DriftAudit,
  EventRecorder,
  Manager,
  type ManagerOptions,
  prometheusControllerMetricsProvider,
  registerInformerMetrics,
  type InformerMetricsRegistration,
} from '../../src/operations/index.js';
import { configMapSets, type ConfigMapSet } from './crd.js';
import { ConfigMapSetReconciler, configMapSetWatch, describeConfigMapSetController, type ConfigMapSetCounts } from './reconciler.js';
import type { ExternalRegistry } from './registry.js';
import type { ShardRing } from '../../src/sharding/index.js';
import type { WebhookServer } from '../../src/webhook/index.js';

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

/** Counters of a {@link ConfigMapSetOperator}: the controller's and the reconcile's. */
export interface ConfigMapSetOperatorStats extends ControllerStats, ConfigMapSetCounts {}

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
  readonly #reconciler: ConfigMapSetReconciler;
  #started = false;
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
    this.factory = new SharedInformerFactory(kubeConfig, {
      namespace: options.namespace,
      transform: stripManagedFields,
      logger: options.logger,
      informerOptions: options.informerOptions,
      agent: options.agent,
    });
    const { registry, onEvent, onReconcile } = options;
    this.#reconciler = new ConfigMapSetReconciler({ registry: () => registry, events: () => this.events, onEvent, onReconcile });
    // The description the fleet (fleet.ts) shares; Leases and Events are the Manager's and the recorder's.
    const seen = options.onInformerEvent;
    this.controller = describeConfigMapSetController(Controller.for(this.factory, configMapSets, configMapSetWatch(seen)), seen)
      .build((_key, ctx) => this.#reconciler.reconcile(ctx), {
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
    return { ...this.controller.stats(), ...this.#reconciler.counts() };
  }
}
