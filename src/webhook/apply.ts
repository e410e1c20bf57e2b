// Webhook configurations applied when the server serves: server-side apply, the server's caBundle filled in where a webhook has none.

import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import { ErrorCodes, InvalidOptionError, KubeInformerError, validateOptions, type Permission, type ResourceDescriptor } from '../core/index.js';
import { newResourceClient, type ApplyConfiguration, type KubeConfigLike } from '../listwatch/index.js';

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
}

const KINDS = {
  ValidatingWebhookConfiguration: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  MutatingWebhookConfiguration: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false },
} as const satisfies Record<string, ResourceDescriptor>;

type Configuration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration;

/** Checks the option at construction: known keys, and objects of the two kinds with a name. */
export function checkConfigurations(options: WebhookConfigurationsOptions): void {
  validateOptions('WebhookServer configurations', options, { objects: 'any', kubeConfig: 'object', fieldManager: 'string', force: 'boolean' });
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

/**
 * What applying the configurations needs: `patch` (the apply) and `create` (an apply that creates the
 * object is authorized as a create too: kube-apiserver's patch handler) of each kind, narrowed to the
 * configurations' names (an apply names its object, so RBAC's `resourceNames` holds for both verbs).
 */
export function configurationPermissions(options: WebhookConfigurationsOptions): Permission[] {
  return options.objects.map((object) => {
    const descriptor = KINDS[object.kind as keyof typeof KINDS];
    const name = object.metadata?.name ?? '';
    return { group: descriptor.group, resource: descriptor.resource, verbs: ['create', 'patch'], resourceNames: [name], reason: `webhook server: applies ${object.kind} ${name}` };
  });
}

/**
 * Applies every configuration (server-side apply), in order. Rejects with `WEBHOOK_CONFIG` naming the
 * configuration the API server refused (its error in `cause`).
 */
export async function applyConfigurations(options: WebhookConfigurationsOptions, caBundle: string | undefined, signal: AbortSignal): Promise<void> {
  for (const object of options.objects) {
    const descriptor = KINDS[object.kind as keyof typeof KINDS];
    const client = newResourceClient<Configuration>(options.kubeConfig, descriptor);
    try {
      await client.apply(withCaBundle(object, caBundle) as ApplyConfiguration<Configuration>, { fieldManager: options.fieldManager ?? 'kube-informer-webhook', force: options.force ?? true, signal });
    } catch (err) {
      if (signal.aborted) return;
      throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, `WebhookServer: cannot apply ${object.kind} ${object.metadata?.name ?? ''}: ${(err as Error).message}`, { cause: err });
    } finally {
      client.close();
    }
  }
}
