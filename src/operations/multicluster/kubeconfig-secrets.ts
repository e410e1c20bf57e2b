// Clusters from kubeconfig Secrets in a management cluster: a Secret added engages its cluster, changed re-engages it, deleted disengages it.

import { createHash } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { callWithTimeout } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { AlreadyStartedError, ApiStatusError, ClusterRefusedError, toError, type ClusterRefusal } from '../../core/errors.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc } from '../../core/keys.js';
import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../../core/options.js';
import type { HasPermissions, Permission } from '../../core/permissions.js';
import { resources, type ResourceDescriptor } from '../../core/resources.js';
import type { DeepReadonly } from '../../core/types.js';
import type { InformerHealth, SharedInformerFactory } from '../../informer/index.js';
import { leanKubeConfigFromText, newResourceClient, type KubeConfigLike } from '../../listwatch/index.js';
import type { ClusterProvider, ClusterSink } from './provider.js';

/** The label multicluster-runtime's kubeconfig provider selects its Secrets by (value `"true"`). */
export const KUBECONFIG_SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';

/** Options of {@link kubeconfigSecrets}. */
export interface KubeconfigSecretsOptions {
  /**
   * The informer factory of the management cluster: the Secrets are watched through its shared
   * informer of `secrets` (started by the provider's `run`; the factory's namespace applies unless
   * `namespace` is given). Required.
   */
  factory: SharedInformerFactory;
  /** The namespace the Secrets live in. Default: the factory's namespace (all namespaces when it has none). */
  namespace?: string;
  /**
   * The label selector the Secrets are listed with. Default `sigs.k8s.io/multicluster-runtime-kubeconfig=true`
   * (multicluster-runtime's convention); Cluster API's Secrets: see {@link clusterApiKubeconfigSecrets}.
   */
  labelSelector?: string;
  /** The key of the Secret's `data` that holds the kubeconfig. Default `'kubeconfig'` (multicluster-runtime's; Cluster API's is `'value'`). */
  key?: string;
  /** The provider's name, for logs and metrics. Default `'kubeconfig-secrets'`. */
  name?: string;
  /**
   * The cluster a Secret describes: a name; `null` when the Secret is not a kubeconfig Secret at all
   * (ignored, counted as `ignored`); `undefined` or `''` when it should name one and does not (refused,
   * reason `no-name`). Default: the Secret's `metadata.name`.
   */
  clusterName?: (secret: DeepReadonly<Secret>) => string | null | undefined;
  /**
   * Ask each cluster's server who its credentials are (a `SelfSubjectReview`) before engaging it: a 401
   * or 403 answer refuses the cluster (reason `unauthorized`). Any other failure — the server
   * unreachable, slow, or without the review (before Kubernetes 1.28) — engages it: an unreachable
   * cluster is the manager's to report. Default `true`.
   */
  verify?: boolean;
  /** How long the check of `verify` may take before the cluster is engaged unchecked, in ms. Default 10 000. */
  verifyTimeoutMs?: number;
  /** The clock `verifyTimeoutMs` is measured on. Default `realClock`. */
  clock?: Clock;
}

const SCHEMA = {
  factory: 'object',
  namespace: 'string',
  labelSelector: 'labelSelector',
  key: 'string',
  name: 'string',
  clusterName: 'function',
  verify: 'boolean',
  verifyTimeoutMs: 'positiveDuration',
  clock: 'clock',
} as const satisfies OptionSchemaFor<KubeconfigSecretsOptions>;

/** What a {@link KubeconfigSecretsProvider} did, by kind: counters since `run` began, and the clusters engaged now. */
export interface KubeconfigSecretsStats {
  /** The clusters engaged from a Secret now, by name, with the Secret (`namespace/name`). */
  readonly engaged: Readonly<Record<string, string>>;
  /** `sink.engage` calls (a re-engage counts again). */
  readonly engages: number;
  /** `sink.disengage` calls. */
  readonly disengages: number;
  /** Refusals, by reason; a Secret refused again for the same reason with the same data is counted once. */
  readonly refused: Readonly<Record<ClusterRefusal, number>>;
  /** Secrets `clusterName` answered `null` for. */
  readonly ignored: number;
}

/** `authentication.k8s.io/v1` `selfsubjectreviews`: "who am I" — allowed to every authenticated user. */
const SELF_SUBJECT_REVIEWS: ResourceDescriptor<object> = { group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', namespaced: false };

interface Held {
  readonly cluster: string;
  readonly hash: string;
}

/**
 * The kubeconfig-Secret cluster provider (see {@link kubeconfigSecrets}). A Secret is handled one at a
 * time, in the order its changes came, on its latest state: a change that comes while an earlier one
 * is being checked replaces it.
 */
export class KubeconfigSecretsProvider implements ClusterProvider, HasPermissions {
  readonly name: string;
  readonly #factory: SharedInformerFactory;
  readonly #namespace: string | undefined;
  readonly #labelSelector: string;
  readonly #key: string;
  readonly #clusterName: (secret: DeepReadonly<Secret>) => string | null | undefined;
  readonly #verify: boolean;
  readonly #verifyTimeoutMs: number;
  readonly #clock: Clock;
  #started = false;
  /** The health of the Secrets' informer, once `run` asked the factory for it. */
  #health: () => Record<string, InformerHealth> = () => ({});
  /** The latest state of each Secret not yet handled (`null`: deleted). */
  readonly #pending = new Map<string, DeepReadonly<Secret> | null>();
  #wake: (() => void) | undefined;
  /** What each Secret engaged: Secret key → cluster and data hash. */
  readonly #held = new Map<string, Held>();
  /** Which Secret engaged each cluster: cluster → Secret key. */
  readonly #owner = new Map<string, string>();
  /** Secrets refused because another Secret engaged their cluster first: re-handled when it lets go. */
  readonly #waiting = new Map<string, DeepReadonly<Secret>>();
  /** The last refusal of each Secret (reason, cluster, data): the same one is not reported twice. */
  readonly #refusals = new Map<string, string>();
  #engages = 0;
  #disengages = 0;
  #ignored = 0;
  readonly #refused: Record<ClusterRefusal, number> = { 'missing-key': 0, unparsable: 0, 'no-name': 0, unauthorized: 0, duplicate: 0, conflict: 0 };

  constructor(options: KubeconfigSecretsOptions) {
    validateOptions('kubeconfigSecrets', options, SCHEMA);
    if (options.factory === undefined) throw new InvalidOptionError('kubeconfigSecrets: option factory is required (the SharedInformerFactory of the management cluster)');
    if (options.key === '') throw new InvalidOptionError('kubeconfigSecrets: option key must not be empty');
    this.name = options.name ?? 'kubeconfig-secrets';
    this.#factory = options.factory;
    this.#namespace = options.namespace;
    this.#labelSelector = options.labelSelector ?? `${KUBECONFIG_SECRET_LABEL}=true`;
    this.#key = options.key ?? 'kubeconfig';
    this.#clusterName = options.clusterName ?? ((s) => s.metadata?.name);
    this.#verify = options.verify ?? true;
    this.#verifyTimeoutMs = options.verifyTimeoutMs ?? 10_000;
    this.#clock = options.clock ?? realClock;
  }

  /** The counters and the clusters engaged now (see {@link KubeconfigSecretsStats}). */
  stats(): KubeconfigSecretsStats {
    const engaged: Record<string, string> = {};
    for (const [cluster, key] of [...this.#owner].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) engaged[cluster] = key;
    return { engaged, engages: this.#engages, disengages: this.#disengages, refused: { ...this.#refused }, ignored: this.#ignored };
  }

  /**
   * What the MANAGEMENT cluster must grant (`ClusterProvider.permissions`): `list` and `watch` of
   * Secrets in option `namespace` (default the factory's; every namespace when neither has one). Each
   * target cluster's `SelfSubjectReview` (option `verify`) needs no rule: every authenticated user may
   * create one (the `system:basic-user` ClusterRole).
   */
  permissions(): Permission[] {
    const p: Permission = { group: '', resource: 'secrets', verbs: ['list', 'watch'], reason: `kubeconfig Secrets of provider ${this.name}` };
    const namespace = this.#namespace ?? this.#factory.namespace;
    if (namespace !== undefined) p.namespace = namespace;
    return [p];
  }

  /**
   * The health of the Secrets' informer (`ClusterProvider.health`): keyed `v1/secrets`, or
   * `v1/secrets in <namespace>` with option `namespace`; empty before `run`. The manager's readiness
   * fails while it is not ready (a 403 listing the Secrets, the management cluster unreachable).
   */
  health(): Record<string, InformerHealth> {
    return this.#health();
  }

  /**
   * Watches the Secrets and reports their clusters to `sink` until `signal` aborts; starts `factory`
   * with `signal` (its other informers too, as `factory.start` does). Resolves after the abort; the
   * clusters stay engaged (the manager stops them). Runs once: a second call throws `ALREADY_STARTED`.
   *
   * Warning: a Secret's kubeconfig may not name files or commands of this host (`certificate-authority`,
   * `client-certificate`, `client-key`, `exec`, `auth-provider`): such a Secret is refused (`unparsable`),
   * never read — a Secret's author does not choose what this process reads or runs.
   */
  async run(signal: AbortSignal, sink: ClusterSink): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(`kubeconfigSecrets provider ${this.name}`);
    this.#started = true;
    const cache = { labelSelector: this.#labelSelector };
    let informer;
    if (this.#namespace === undefined) {
      const all = (informer = this.#factory.forResource(resources.secrets, cache));
      this.#health = () => ({ 'v1/secrets': all.health() });
    } else {
      const set = (informer = this.#factory.forResource(resources.secrets, { ...cache, namespaces: [this.#namespace] }));
      this.#health = () => Object.fromEntries(Object.entries(set.health()).map(([ns, h]) => [`v1/secrets in ${ns}`, h]));
    }
    const offer = (secret: DeepReadonly<Secret> | DeletedFinalStateUnknown<DeepReadonly<Secret>>, deleted: boolean): void => {
      const key = secret instanceof DeletedFinalStateUnknown ? secret.key : metaNamespaceKeyFunc(secret);
      this.#pending.set(key, deleted || secret instanceof DeletedFinalStateUnknown ? null : secret);
      this.#wake?.();
    };
    const registration = informer.addEventHandler(
      { onAdd: (s) => offer(s, false), onUpdate: (_, s) => offer(s, false), onDelete: (s) => offer(s, true) },
      { name: `cluster provider ${this.name}` },
    );
    const onAbort = (): void => this.#wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.#factory.start(signal);
      while (!signal.aborted) {
        const next = this.#pending.entries().next();
        if (next.done === true) {
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = undefined;
          continue;
        }
        const [key, secret] = next.value;
        this.#pending.delete(key);
        await this.#handle(key, secret, sink, signal);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      informer.removeEventHandler(registration);
    }
  }

  async #handle(key: string, secret: DeepReadonly<Secret> | null, sink: ClusterSink, signal: AbortSignal): Promise<void> {
    const source = `secret ${key}`;
    if (secret === null) {
      this.#waiting.delete(key);
      this.#refusals.delete(key);
      this.#release(key, `${source} was deleted`, sink);
      return;
    }
    let cluster: string | null | undefined;
    try {
      cluster = this.#clusterName(secret);
    } catch (err) {
      this.#refuse(sink, key, undefined, 'no-name', `${source}: clusterName threw: ${toError(err).message}`, err);
      return;
    }
    if (cluster === null) {
      if (this.#refusals.get(key) !== 'ignored') this.#ignored++;
      this.#refusals.set(key, 'ignored');
      this.#release(key, `${source} no longer describes a cluster`, sink);
      return;
    }
    if (typeof cluster !== 'string' || cluster === '') {
      this.#refuse(sink, key, undefined, 'no-name', `${source} names no cluster (clusterName answered ${JSON.stringify(cluster)}): not engaged`);
      return;
    }
    const owner = this.#owner.get(cluster);
    if (owner !== undefined && owner !== key) {
      this.#waiting.set(key, secret);
      this.#refuse(sink, key, cluster, 'duplicate', `${source} names cluster ${JSON.stringify(cluster)}, which secret ${owner} engaged first: not engaged (it is tried again when secret ${owner} lets the name go)`);
      return;
    }
    this.#waiting.delete(key);
    const data = secret.data?.[this.#key];
    if (data === undefined || data === '') {
      const has = Object.keys(secret.data ?? {}).sort();
      this.#refuse(sink, key, cluster, 'missing-key', `${source} has no data key ${JSON.stringify(this.#key)} (it has: ${has.join(', ') || 'none'}): cluster ${JSON.stringify(cluster)} not engaged`);
      return;
    }
    const hash = createHash('sha256').update(data).digest('hex');
    const held = this.#held.get(key);
    if (held?.cluster === cluster && held.hash === hash) return; // a resync, or a change of something else
    const signature = `${cluster}|${hash}`;
    let kubeConfig: KubeConfigLike;
    try {
      kubeConfig = leanKubeConfigFromText(Buffer.from(data, 'base64').toString('utf8'), source);
    } catch (err) {
      this.#refuse(sink, key, cluster, 'unparsable', `${source}, key ${JSON.stringify(this.#key)}: ${toError(err).message}: cluster ${JSON.stringify(cluster)} not engaged`, err, signature);
      return;
    }
    const refusal = this.#verify ? await this.#check(kubeConfig, signal) : undefined;
    if (signal.aborted || this.#pending.has(key)) return; // stopped, or a newer state of the Secret came while checking
    if (refusal !== undefined) {
      const server = kubeConfig.getCurrentCluster()?.server ?? '?';
      this.#refuse(sink, key, cluster, 'unauthorized', `${source}: the server ${server} refused its credentials (${refusal.statusCode} ${refusal.reason ?? ''}): cluster ${JSON.stringify(cluster)} not engaged`, refusal, signature);
      return;
    }
    if (held !== undefined && held.cluster !== cluster) this.#release(key, `${source} now names cluster ${JSON.stringify(cluster)}`, sink);
    try {
      sink.engage(cluster, kubeConfig, source);
    } catch (err) {
      this.#refuse(sink, key, cluster, 'conflict', `${source}: cluster ${JSON.stringify(cluster)} was not engaged: ${toError(err).message}`, err, signature);
      return;
    }
    this.#engages++;
    this.#refusals.delete(key);
    this.#held.set(key, { cluster, hash });
    this.#owner.set(cluster, key);
  }

  /** The 401 or 403 of a `SelfSubjectReview` with `kubeConfig`; `undefined` for any other answer. */
  async #check(kubeConfig: KubeConfigLike, signal: AbortSignal): Promise<ApiStatusError | undefined> {
    const client = newResourceClient(kubeConfig, SELF_SUBJECT_REVIEWS, { userAgent: `kube-informer ${this.name}` });
    try {
      const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
      // Aborted or timed out (ABORTED, TIMED_OUT), or any answer: not a refusal of the credentials.
      await callWithTimeout(this.#clock, this.#verifyTimeoutMs, signal, (s) => client.create(review, s));
      return undefined;
    } catch (err) {
      return err instanceof ApiStatusError && (err.statusCode === 401 || err.statusCode === 403) ? err : undefined;
    } finally {
      client.close();
    }
  }

  /** Disengages what Secret `key` engaged, if anything, and hands its cluster name to a Secret that waited for it. */
  #release(key: string, reason: string, sink: ClusterSink): void {
    const held = this.#held.get(key);
    if (held === undefined) return;
    this.#held.delete(key);
    this.#owner.delete(held.cluster);
    this.#disengages++;
    sink.disengage(held.cluster, reason);
    for (const [waiting, secret] of this.#waiting) {
      this.#waiting.delete(waiting);
      this.#refusals.delete(waiting);
      if (!this.#pending.has(waiting)) this.#pending.set(waiting, secret);
    }
  }

  #refuse(sink: ClusterSink, key: string, cluster: string | undefined, reason: ClusterRefusal, message: string, cause?: unknown, signature = String(cluster)): void {
    const seen = `${reason}|${signature}`;
    if (this.#refusals.get(key) === seen) return;
    this.#refusals.set(key, seen);
    this.#refused[reason]++;
    sink.refuse(cluster, new ClusterRefusedError(reason, message, cause === undefined ? undefined : { cause }), `secret ${key}`);
  }
}

/**
 * The clusters described by kubeconfig Secrets of a management cluster, as a {@link ClusterProvider}:
 * a Secret added engages its cluster, a change of its kubeconfig re-engages it, its deletion disengages
 * it. The defaults are multicluster-runtime's kubeconfig provider's: Secrets labelled
 * `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, the kubeconfig under data key `kubeconfig`, the
 * cluster named after the Secret. The kubeconfig is read by the same reader as `loadKubeConfig({ lean: true })`.
 *
 * Bad input is refused through `sink.refuse` with a `ClusterRefusedError` naming the Secret and the
 * field, counted in `stats().refused`, and never engaged: a Secret without the key (`missing-key`), a
 * kubeconfig that does not parse or names files or commands of this host (`unparsable`), credentials
 * the server answers 401 or 403 to (`unauthorized`, with `verify`), a second Secret naming an engaged
 * cluster (`duplicate`: the first one keeps it; the second is tried again when the first lets go), a
 * name the sink refuses (`conflict`: engaged from another provider). A refused change of an engaged
 * Secret leaves its cluster engaged as it was.
 *
 * Recovery: a refused Secret is tried again when it changes, and at every resync of the factory's
 * informer (`resyncPeriodMs`): credentials the server accepts later are then engaged.
 *
 * @example
 * ```ts
 * import { SharedInformerFactory, loadKubeConfig } from 'kube-informer';
 * import { kubeconfigSecrets } from 'kube-informer/operations';
 * const factory = new SharedInformerFactory(loadKubeConfig({ lean: true }));
 * const provider = kubeconfigSecrets({ factory, namespace: 'fleet' });
 * console.log(provider.name);
 * ```
 */
export function kubeconfigSecrets(options: KubeconfigSecretsOptions): KubeconfigSecretsProvider {
  return new KubeconfigSecretsProvider(options);
}

/** Cluster API's label on the Secrets of a cluster (value: the cluster's name). */
const CAPI_CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/**
 * {@link kubeconfigSecrets} for Cluster API's Secrets: `<cluster>-kubeconfig`, labelled
 * `cluster.x-k8s.io/cluster-name=<cluster>`, the kubeconfig under data key `value`. Cluster API's other
 * Secrets of a cluster (`-ca`, `-etcd`, `-sa`, `-proxy`, a provider's `-user-kubeconfig`) carry the same
 * label and are ignored (`stats().ignored`). `options` as for `kubeconfigSecrets` (its `labelSelector`,
 * `key` and `clusterName` are Cluster API's here).
 */
export function clusterApiKubeconfigSecrets(options: Omit<KubeconfigSecretsOptions, 'labelSelector' | 'key' | 'clusterName'>): KubeconfigSecretsProvider {
  validateOptions('clusterApiKubeconfigSecrets', options as KubeconfigSecretsOptions, SCHEMA);
  for (const option of ['labelSelector', 'key', 'clusterName']) {
    if (option in options) throw new InvalidOptionError(`clusterApiKubeconfigSecrets: option ${option} is Cluster API's here; use kubeconfigSecrets to choose it`);
  }
  return new KubeconfigSecretsProvider({
    name: 'cluster-api-kubeconfigs',
    ...options,
    labelSelector: CAPI_CLUSTER_NAME_LABEL,
    key: 'value',
    clusterName: (secret) => {
      const cluster = secret.metadata?.labels?.[CAPI_CLUSTER_NAME_LABEL];
      if (cluster === undefined || cluster === '') return undefined;
      return secret.metadata?.name === `${cluster}-kubeconfig` ? cluster : null;
    },
  });
}
