// Conversion webhooks (apiextensions.k8s.io/v1 ConversionReview): hub-and-spoke converters typed per version, checked at construction.

import { ErrorCodes, KubeInformerError, formatDuration, validateOptions } from '../core/index.js';
import { reviewRequest, type Webhook } from './review.js';

/** A review asked for a group or version the webhook does not serve: a Failure that says so (not an internal error). */
class UnservedVersionError extends Error {}

/** Converts one spoke version to the hub and back. Both directions must be lossless for a round trip (stash extra fields in annotations). */
export interface SpokeConverter<Spoke, Hub> {
  /** The spoke object → the hub version (`apiVersion` and `metadata` are set by the webhook). */
  toHub(object: Spoke): Hub;
  /** The hub object → this spoke version. */
  fromHub(hub: Hub): Spoke;
}

/** Options of {@link conversionWebhook}; `Versions` maps each version name to its object type, `Hub` names the hub. */
export interface ConversionWebhookOptions<Versions extends Record<string, object>, Hub extends keyof Versions & string> {
  /** The webhook's name, in logs. Required. */
  name: string;
  /** The custom resource's API group, e.g. `'example.com'`. Required. */
  group: string;
  /** The hub version: every conversion goes through it (controller-runtime's `Hub`). Required. */
  hub: Hub;
  /** A converter for every other version. Required. */
  spokes: { [V in Exclude<keyof Versions & string, Hub>]: SpokeConverter<Versions[V], Versions[Hub]> };
  /**
   * The versions the CRD serves (`spec.versions[].served`): each must be the hub or have a converter,
   * checked at construction. Default: the hub and the spokes.
   */
  servedVersions?: readonly string[];
}

/** A conversion webhook: serve it with {@link WebhookServer.register}; `convert` runs the same conversion in-process (tests). */
export interface ConversionWebhook extends Webhook {
  /** The served versions. */
  readonly versions: readonly string[];
  /** Converts `object` to `apiVersion` (`group/version`) exactly as a review would; throws on an unknown version. */
  convert(object: Record<string, unknown>, apiVersion: string): Record<string, unknown>;
}

/**
 * A hub-and-spoke conversion webhook. Every served version must be the hub or have a {@link SpokeConverter}:
 * otherwise construction throws `WEBHOOK_CONFIG` naming the unreachable versions. The object's
 * `metadata` is carried over and `apiVersion` set to the desired one; only its `labels` and `annotations` are taken from the converter (the
 * API server refuses other metadata changes), so stash fields another version cannot hold in an annotation.
 *
 * ```ts
 * conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({ name: 'widgets', group: 'example.com', hub: 'v2', spokes: { v1: { toHub, fromHub } } });
 * ```
 */
export function conversionWebhook<Versions extends Record<string, object>, Hub extends keyof Versions & string>(options: ConversionWebhookOptions<Versions, Hub>): ConversionWebhook {
  validateOptions('conversionWebhook', options, { name: 'string', group: 'string', hub: 'string', spokes: 'object', servedVersions: 'any' });
  const { name, group, hub } = options;
  if (typeof name !== 'string' || name === '' || typeof group !== 'string' || typeof hub !== 'string' || hub === '') {
    throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, 'conversionWebhook: name, group and hub are required');
  }
  const spokes = options.spokes as unknown as Record<string, SpokeConverter<Record<string, unknown>, Record<string, unknown>>>;
  const versions = options.servedVersions ?? [hub, ...Object.keys(spokes)];
  const unreachable = versions.filter((v) => v !== hub && !(typeof spokes[v]?.toHub === 'function' && typeof spokes[v]?.fromHub === 'function'));
  if (unreachable.length) {
    throw new KubeInformerError(ErrorCodes.WEBHOOK_CONFIG, `conversionWebhook ${name}: served version(s) ${unreachable.join(', ')} have no converter to and from the hub ${hub}`);
  }
  const versionOf = (apiVersion: unknown): string => {
    if (typeof apiVersion !== 'string' || !apiVersion.startsWith(`${group}/`)) throw new UnservedVersionError(`apiVersion ${String(apiVersion)} is not of group ${group}`);
    const version = apiVersion.slice(group.length + 1);
    if (!versions.includes(version)) throw new UnservedVersionError(`version ${version} is not served (served: ${versions.join(', ')})`);
    return version;
  };
  const convert = (object: Record<string, unknown>, apiVersion: string): Record<string, unknown> => {
    const from = versionOf(object.apiVersion);
    const to = versionOf(apiVersion);
    if (from === to) return object;
    const input = structuredClone(object);
    const atHub = from === hub ? input : spokes[from].toHub(input);
    const out = to === hub ? atHub : spokes[to].fromHub(atHub);
    // The API server refuses a changed metadata except labels and annotations (where a converter stashes
    // what the other version cannot hold): keep the rest from the input.
    const meta = (out.metadata ?? {}) as Record<string, unknown>;
    const metadata = { ...(object.metadata as Record<string, unknown>), labels: meta.labels, annotations: meta.annotations };
    for (const key of ['labels', 'annotations'] as const) if (metadata[key] === undefined) delete metadata[key];
    return { ...out, apiVersion, kind: object.kind, metadata };
  };
  const respond = (uid: string, result: { status: 'Success' } | { status: 'Failure'; message: string }, convertedObjects: unknown[] = []): unknown => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, result, convertedObjects },
  });
  const requestOf = (body: unknown) => reviewRequest(body, 'apiextensions.k8s.io/v1', 'ConversionReview');
  return {
    name,
    type: 'conversion',
    versions,
    convert,
    review(body) {
      const request = requestOf(body);
      const desired = request.desiredAPIVersion;
      const objects = Array.isArray(request.objects) ? (request.objects as Array<Record<string, unknown>>) : [];
      try {
        return Promise.resolve(respond(request.uid, { status: 'Success' }, objects.map((o) => convert(o, String(desired)))));
      } catch (err) {
        // A version or group we do not serve is the caller's mistake: say which; a converter that throws is ours (failed()).
        if (err instanceof UnservedVersionError) return Promise.resolve(respond(request.uid, { status: 'Failure', message: `${name}: ${err.message}` }));
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    timedOut(body, timeoutMs) {
      return respond(requestOf(body).uid, { status: 'Failure', message: `${name}: the conversion did not finish within ${formatDuration(timeoutMs)}` });
    },
    failed(body) {
      return respond(requestOf(body).uid, { status: 'Failure', message: `${name}: conversion failed: internal error (see the webhook's log)` });
    },
  };
}
