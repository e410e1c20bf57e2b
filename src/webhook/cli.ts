// The work behind `kube-informer webhook manifests` (the command itself is src/cli/webhook.ts): the webhook configurations modules export, as YAML.

import { withCaBundle } from './apply.js';
import { manifestYaml } from './manifests.js';

const KINDS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);

function configurationsIn(value: unknown): object[] {
  if (Array.isArray(value)) return value.flatMap(configurationsIn);
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof value === 'object' && value !== null && typeof kind === 'string' && KINDS.has(kind) ? [value] : [];
}

/**
 * YAML of every ValidatingWebhookConfiguration and MutatingWebhookConfiguration the modules export (an
 * object, or a list of them), in export order, with `caBundle` (base64) set on every webhook that has
 * none; throws naming a module that exports none.
 */
export function webhookManifests(modules: ReadonlyArray<{ path: string; exports: Record<string, unknown> }>, caBundle: string | undefined): string {
  const objects: object[] = [];
  for (const { path, exports } of modules) {
    const found = Object.values(exports).flatMap(configurationsIn);
    if (found.length === 0) throw new Error(`${path} exports no ValidatingWebhookConfiguration or MutatingWebhookConfiguration`);
    objects.push(...found);
  }
  return manifestYaml(objects.map((o) => withCaBundle(o as Parameters<typeof withCaBundle>[0], caBundle)));
}
