// Webhook configurations applied when the server serves: server-side apply, the server's caBundle filled in where a webhook has none.

import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import { ErrorCodes, errorFields, InvalidOptionError, KubeInformerError, validateOptions, type Clock, type Logger, type Permission, type ResourceDescriptor, type Verb } from '../core/index.js';
import { newResourceClient, type ApplyConfiguration, type JsonPatchOperation, type KubeConfigLike } from '../listwatch/index.js';

/** Options of `WebhookServerOptions.configurations`: what the server registers with the API server once it serves. */
export interface WebhookConfigurationsOptions {
  /**
   * `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` objects (from
   * `validatingWebhookConfiguration` / `mutatingWebhookConfiguration`). A webhook whose `clientConfig`
   * has no `caBundle` gets the server's (`WebhookServer.caBundle()`), so a self-signed CA needs no
   * extra step. Required.
   */
  objects: ReadonlyArray<ValidatingWebhookConfiguration | MutatingWebhookConfiguration>;
  /** The cluster to apply them to (a `KubeConfig`). Required. */
  kubeConfig: KubeConfigLike;
  /** The field manager of the apply. Default: `'kube-informer-webhook'`. */
  fieldManager?: string;
  /** Take over fields another manager set (as `kubectl apply --server-side --force-conflicts`). Default: `true` (the server's configuration is the truth). */
  force?: boolean;
  /**
   * What becomes of the configurations this server applied when it stops, out of a cluster (a
   * development run on a laptop, `inCluster` false): `'keep'` leaves them (every later write they match
   * fails with `failed calling webhook … connection refused` until the server runs again, for webhooks
   * whose `failurePolicy` is `Fail`); `'delete'` deletes them (only the objects this process applied:
   * the delete carries their `uid` as a precondition); `'ignore'` sets every webhook's `failurePolicy` to
   * `Ignore` (a JSON patch that first tests the `uid`), so writes pass unchecked while it is down. In a
   * cluster they are kept whatever this says (another replica, or the next pod, serves them), with a
   * log line saying so. Needs RBAC `delete` (or `patch`) on the configurations. Default `'keep'`.
   */
  onStop?: 'keep' | 'delete' | 'ignore';
  /** Whether the process runs in a cluster, where `onStop` keeps the configurations. Default: `KUBERNETES_SERVICE_HOST` is set. */
  inCluster?: boolean;
}

const KINDS = {
  ValidatingWebhookConfiguration: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  MutatingWebhookConfiguration: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false },
} as const satisfies Record<string, ResourceDescriptor>;

type Configuration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration;

/** Checks the option at construction: known keys, and objects of the two kinds with a name. */
export function checkConfigurations(options: WebhookConfigurationsOptions): void {
  validateOptions('WebhookServer configurations', options, { objects: 'any', kubeConfig: 'object', fieldManager: 'string', force: 'boolean', onStop: ['keep', 'delete', 'ignore'], inCluster: 'boolean' });
  if (options.kubeConfig === undefined) throw new InvalidOptionError('WebhookServer: option configurations.kubeConfig is required');
  if (!Array.isArray(options.objects)) throw new InvalidOptionError('WebhookServer: option configurations.objects must be an array of webhook configurations');
  options.objects.forEach((o: Partial<Configuration>, i) => {
    if (!(o?.kind !== undefined && o.kind in KINDS) || typeof o.metadata?.name !== 'string') {
      throw new InvalidOptionError(`WebhookServer: configurations.objects[${i}] must be a ValidatingWebhookConfiguration or MutatingWebhookConfiguration with a metadata.name, got kind ${String(o?.kind)}`);
    }
  });
}

/** The object with `caBundle` set on every webhook that has none (a copy). */
export function withCaBundle<T extends Configuration>(object: T, caBundle: string | undefined): T {
  if (caBundle === undefined) return object;
  const copy = structuredClone(object);
  for (const w of copy.webhooks ?? []) if (w.clientConfig.caBundle === undefined) w.clientConfig.caBundle = caBundle;
  return copy;
}

/** A configuration as this process applied it: what `onStop` may delete or patch (that object, by uid, alone). */
export interface AppliedConfiguration {
  /** Its kind. */
  kind: keyof typeof KINDS;
  /** Its name. */
  name: string;
  /** The uid the API server gave it. */
  uid: string;
  /** How many webhooks it has. */
  webhooks: number;
}

/**
 * What applying the configurations needs: `patch` (the apply) and `create` (an apply that creates the
 * object is authorized as a create too: kube-apiserver's patch handler) of each kind, narrowed to the
 * configurations' names (an apply names its object, so RBAC's `resourceNames` holds for both verbs);
 * with `onStop: 'delete'` out of a cluster (`inCluster` not true), `delete` too. (`'ignore'` is a
 * patch, granted already.)
 */
export function configurationPermissions(options: WebhookConfigurationsOptions): Permission[] {
  const deletes = options.onStop === 'delete' && options.inCluster !== true;
  return options.objects.map((object) => {
    const descriptor = KINDS[object.kind as keyof typeof KINDS];
    const name = object.metadata?.name ?? '';
    const verbs: Verb[] = deletes ? ['create', 'patch', 'delete'] : ['create', 'patch'];
    const reason = `webhook server: applies ${object.kind} ${name}${deletes ? " (and deletes it at stop out of a cluster: onStop 'delete')" : ''}`;
    return { group: descriptor.group, resource: descriptor.resource, verbs, resourceNames: [name], reason };
  });
}

/**
 * Applies every configuration (server-side apply), in order, and returns each as applied (its uid),
 * pushed into `applied` as it goes (so a failure part-way leaves the record of those applied).
 * Rejects with `WEBHOOK_CONFIG` naming the configuration the API server refused (its error in `cause`).
 * A stop while it applies returns those applied so far.
 */
export async function applyConfigurations(options: WebhookConfigurationsOptions, caBundle: string | undefined, signal: AbortSignal, applied: AppliedConfiguration[] = []): Promise<AppliedConfiguration[]> {
  for (const object of options.objects) {
    const kind = object.kind as keyof typeof KINDS;
    const client = newResourceClient<Configuration>(options.kubeConfig, KINDS[kind]);
    try {
      const stored = await client.apply(withCaBundle(object, caBundle) as ApplyConfiguration<Configuration>, { fieldManager: options.fieldManager ?? 'kube-informer-webhook', force: options.force ?? true, signal });
      applied.push({ kind, name: stored.metadata?.name ?? '', uid: stored.metadata?.uid ?? '', webhooks: stored.webhooks?.length ?? 0 });
    } catch (err) {
      if (signal.aborted) return applied;
      throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, `WebhookServer: cannot apply ${object.kind} ${object.metadata?.name ?? ''}: ${(err as Error).message}`, { cause: err });
    } finally {
      client.close();
    }
  }
  return applied;
}

/** How long removing (or relaxing) the configurations at stop may take in all, in ms: 10 000. */
export const ON_STOP_TIMEOUT_MS = 10_000;

/**
 * At the server's stop: does what `onStop` says with the configurations this process applied (see
 * {@link WebhookConfigurationsOptions.onStop}); in a cluster, keeps them with an info line saying why.
 * Never rejects: each configuration it could not delete or patch is logged as an error naming it (a
 * 404 of a delete — already gone — and a 409 — the object is another one now — are logged as info and
 * warning). Bounded by {@link ON_STOP_TIMEOUT_MS}.
 */
export async function settleConfigurationsOnStop(options: WebhookConfigurationsOptions, applied: readonly AppliedConfiguration[], log: Logger, clock: Clock): Promise<void> {
  const onStop = options.onStop ?? 'keep';
  if (onStop === 'keep' || applied.length === 0) return;
  const names = applied.map((a) => `${a.kind} ${a.name}`).join(', ');
  if (options.inCluster ?? (process.env.KUBERNETES_SERVICE_HOST ?? '') !== '') {
    log.info(`WebhookServer: keeping ${names} at stop: onStop '${onStop}' applies out of a cluster only, and this process runs in one (KUBERNETES_SERVICE_HOST is set): another replica, or the next pod, serves them`);
    return;
  }
  const deadline = new AbortController();
  const timer = clock.setTimeout(() => deadline.abort(new Error(`onStop took longer than ${ON_STOP_TIMEOUT_MS} ms`)), ON_STOP_TIMEOUT_MS);
  try {
    for (const a of applied) {
      const client = newResourceClient<Configuration>(options.kubeConfig, KINDS[a.kind]);
      const what = `${a.kind} ${a.name}`;
      try {
        if (onStop === 'delete') {
          await client.delete(a.name, undefined, { preconditions: { uid: a.uid }, signal: deadline.signal });
          log.info(`WebhookServer: deleted ${what} at stop (onStop 'delete')`);
        } else {
          const ops: JsonPatchOperation[] = [{ op: 'test', path: '/metadata/uid', value: a.uid }];
          for (let i = 0; i < a.webhooks; i++) ops.push({ op: 'replace', path: `/webhooks/${i}/failurePolicy`, value: 'Ignore' });
          await client.patch(a.name, undefined, ops, 'json', deadline.signal);
          log.info(`WebhookServer: set failurePolicy Ignore on every webhook of ${what} at stop (onStop 'ignore')`);
        }
      } catch (err) {
        const status = (err as { statusCode?: unknown }).statusCode;
        if (onStop === 'delete' && status === 404) log.info(`WebhookServer: ${what} was already gone at stop`);
        else if (status === 409 || status === 422) log.warn(`WebhookServer: left ${what} alone at stop: it is no longer the object this process applied (uid ${a.uid}): ${(err as Error).message}`);
        else log.error(`WebhookServer: could not ${onStop === 'delete' ? 'delete' : 'set failurePolicy Ignore on'} ${what} at stop (onStop '${onStop}'): ${(err as Error).message}`, errorFields(err));
      } finally {
        client.close();
      }
    }
  } finally {
    clock.clearTimeout(timer);
  }
}
