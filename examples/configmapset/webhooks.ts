// The ConfigMapSet operator's webhooks: a validating webhook (the definition's schema, and what no schema can say) and a conversion webhook between the definition's v1 and v2.
//
// Run: npx tsx examples/configmapset/webhooks.ts   — serves both on https://127.0.0.1:9443 with a
// self-signed CA and prints the ValidatingWebhookConfiguration and the CRD's `conversion` stanza as one
// JSON List on stdout (`... | kubectl apply -f -` installs the first; merge the second into the CRD).
// Ctrl-C stops it gracefully. `main.ts --webhooks` runs them under the operator's Manager instead and
// registers them for its run. `test/examples/configmapset-webhooks.test.ts` tests both.

import {
  WebhookServer,
  conversionWebhook,
  crdConversion,
  manifestList,
  validatingWebhookConfiguration,
  validationWebhook,
} from '../../src/webhook/index.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import { newResourceClient, type LoggerOption, type ResourceDescriptor } from '../../src/index.js';
import { isNotFound } from '../../src/objects.js';
import type { CrdConversion } from '../../src/webhook/index.js';
import type { FieldError } from '../../src/crd/index.js';
import { configMapSetDefinition, GROUP, installCrd, VERSION, type ConfigMapSet, type ConfigMapSetV2 } from './crd.js';
import { isMain } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';

/** The most ConfigMaps a set may own: a rule about the cluster's capacity, not the object's shape. */
export const MAX_CONFIGMAPS = 50;

/**
 * Validates a ConfigMapSet (at v1: the API server converts a v2 request before calling it, see the
 * rule's `apiVersions`): `validationWebhook` runs the definition's schema first — the same checks and
 * messages as the API server's, which already ran them on a real cluster; here for the fake and offline
 * checks — then what the schema cannot say: names unique, `<set>-<name>` a valid ConfigMap name, at
 * most 50 ConfigMaps.
 */
export const validateConfigMapSet = validationWebhook(
  configMapSetDefinition,
  (req) => {
    const set = req.object as ConfigMapSet; // v1: the configuration's rule sends no other version
    const names = set.spec.names;
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    names.forEach((name, i) => {
      if (seen.has(name)) errors.push({ field: `spec.names[${i}]`, message: `duplicate name ${name}`, type: 'FieldValueDuplicate' });
      seen.add(name);
      const full = `${set.metadata?.name ?? ''}-${name}`;
      if (full.length > 253) errors.push({ field: `spec.names[${i}]`, message: `the ConfigMap name ${full.slice(0, 40)}… is longer than 253 characters`, type: 'FieldValueTooLong' });
    });
    if (names.length > MAX_CONFIGMAPS) errors.push({ field: 'spec.names', message: `at most ${MAX_CONFIGMAPS} ConfigMaps, got ${names.length}`, type: 'FieldValueTooMany' });
    return errors;
  },
  { name: `vconfigmapset.${GROUP}` },
);

/** Converts ConfigMapSets between v1 and v2 (the hub), the definition's two versions: names ↔ configMaps, lossless both ways. */
export const convertConfigMapSet = conversionWebhook<{ v1: ConfigMapSet; v2: ConfigMapSetV2 }, 'v2'>({
  name: `configmapsets.${GROUP}`,
  group: GROUP,
  hub: 'v2',
  spokes: {
    v1: {
      toHub: (v1) => ({ ...v1, apiVersion: undefined, spec: { configMaps: v1.spec.names.map((name) => ({ name })), data: v1.spec.data } }),
      fromHub: (v2) => ({ ...v2, apiVersion: undefined, spec: { names: v2.spec.configMaps.map((c) => c.name), data: v2.spec.data } }),
    },
  },
});

/** The manifests pointing the API server at `url` with `caBundle`: the ValidatingWebhookConfiguration and the CRD's `conversion` stanza. */
export function configMapSetWebhookManifests(url: string, caBundle: string | undefined): [ValidatingWebhookConfiguration, { conversion: CrdConversion }] {
  return [
    validatingWebhookConfiguration({
      name: `configmapsets.${GROUP}`,
      endpoint: { url },
      caBundle,
      webhooks: [
        {
          name: validateConfigMapSet.name,
          path: '/validate-configmapsets',
          // v1 only, matchPolicy Equivalent (the default): a v2 request reaches the webhook converted to v1.
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [GROUP], apiVersions: [VERSION], resources: ['configmapsets'] }],
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
        },
      ],
    }),
    { conversion: crdConversion({ endpoint: { url }, path: '/convert-configmapsets', caBundle }) },
  ];
}

/**
 * A WebhookServer with both webhooks (`/validate-configmapsets`, `/convert-configmapsets`) on
 * `127.0.0.1:<port>` (default 9443; 0: any free one) with a self-signed CA: `run(signal)` it, or give
 * it to the operator (`webhookServer`), whose Manager runs it.
 */
export function configMapSetWebhookServer(options: { port?: number; logger?: LoggerOption } = {}): WebhookServer {
  const server = new WebhookServer({ tls: { selfSigned: { hosts: ['127.0.0.1', 'localhost'] } }, host: '127.0.0.1', port: options.port ?? 9443, logger: options.logger });
  server.register('/validate-configmapsets', validateConfigMapSet);
  server.register('/convert-configmapsets', convertConfigMapSet);
  return server;
}

const validatingConfigurations: ResourceDescriptor<ValidatingWebhookConfiguration> = Object.freeze({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
});

/**
 * Registers the webhooks `server` serves on a real cluster, at `url` (default
 * `https://127.0.0.1:<port>`) with the server's CA: applies the ValidatingWebhookConfiguration and
 * installs the CRD with the conversion stanza (v2 served). Resolves with what unregisters them — the
 * configuration deleted, the CRD back to v1 only — to call once the server stops: a configuration
 * with `failurePolicy: Fail` left pointing at a stopped server would refuse every write of a set.
 */
export async function registerConfigMapSetWebhooks(kubeConfig: KubeConfig, server: WebhookServer, url: string | undefined, signal: AbortSignal): Promise<(signal: AbortSignal) => Promise<void>> {
  const [configuration, { conversion }] = configMapSetWebhookManifests(url ?? `https://127.0.0.1:${server.port()}`, server.caBundle());
  const name = configuration.metadata?.name ?? '';
  const client = newResourceClient(kubeConfig, validatingConfigurations, { fieldManager: 'configmapset-example' });
  try {
    await client.apply({ ...configuration, apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name } }, { force: true, signal });
  } finally {
    client.close();
  }
  const unregister = async (stopSignal: AbortSignal): Promise<void> => {
    const again = newResourceClient(kubeConfig, validatingConfigurations, { fieldManager: 'configmapset-example' });
    try {
      await again.delete(name, undefined, { signal: stopSignal }).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    } finally {
      again.close();
    }
    await installCrd(kubeConfig, stopSignal);
  };
  try {
    await installCrd(kubeConfig, signal, { conversion });
  } catch (err) {
    await unregister(AbortSignal.timeout(30_000)).catch(() => undefined); // the error that matters is err
    throw err;
  }
  return unregister;
}

if (isMain(import.meta.url)) {
  const server = configMapSetWebhookServer();
  const running = server.run(shutdownSignal());
  while (!server.ready()) await Promise.race([running, new Promise((r) => setImmediate(r))]);
  process.stdout.write(manifestList(configMapSetWebhookManifests(`https://127.0.0.1:${server.port()}`, server.caBundle())));
  await running;
}
