// What follows a CRD write on the fake API server, as on kube-apiserver: a deleted CRD takes its objects with it (DELETED events, watches ended, 404 after) and says so; a changed schema's defaults show on reads; CEL rules the fake cannot evaluate are named.

import type { Logger } from '../../core/log.js';
import type { KubeObject } from '../../core/types.js';
import type { ResourceState, StateChange } from '../resource-state.js';
import { defaultedOnRead } from './custom-resources.js';
import { CRD_STATE_KEY, type ResourceRegistry } from './registry.js';
import type { WatchConnection } from './watch.js';

/** What the CRD watcher needs from the server. */
interface CrdLifecycleContext {
  /** The shared object state. */
  readonly state: ResourceState;
  /** Known resources (the stored CRDs' included). */
  readonly registry: ResourceRegistry;
  /** Open watches (those of a deleted CRD's resource are ended). */
  readonly watches: ReadonlySet<WatchConnection>;
  /** Where the warning of a deleted CRD goes. */
  readonly logger: Logger;
}

/** The state key a CRD's objects are stored under (`<plural>.<group>`), or undefined for a malformed CRD. */
function stateKeyOf(crd: KubeObject): string | undefined {
  const spec = (crd as { spec?: { group?: unknown; names?: { plural?: unknown } } }).spec;
  const group = spec?.group;
  const plural = spec?.names?.plural;
  return typeof group === 'string' && group !== '' && typeof plural === 'string' && plural !== '' ? `${plural}.${group}` : undefined;
}

/**
 * Deletes every object of a deleted CRD, as kube-apiserver's customresourcecleanup finalizer does
 * before the CRD goes (each a DELETED event), then ends the open watches of its resource (the server
 * tears its storage down; the resource answers 404 from now on) and logs a warning naming the CRD and
 * how many objects went with it.
 */
function deleteObjectsOf(ctx: CrdLifecycleContext, crd: KubeObject): void {
  const stateKey = stateKeyOf(crd);
  if (stateKey === undefined) return;
  const entries = ctx.state.entries(stateKey);
  for (const e of entries) ctx.state.delete(stateKey, e.namespace, e.name);
  for (const w of [...ctx.watches]) if (w.stateKey === stateKey) w.end();
  const name = crd.metadata?.name ?? stateKey;
  ctx.logger.warn(
    `FakeApiServer: CustomResourceDefinition ${name} was deleted: its ${entries.length} object(s) were deleted (a DELETED event each), ` +
      `the watches of ${stateKey} ended, and it is no longer served (404), as on kube-apiserver`,
    { crd: name, resource: stateKey, deleted: entries.length },
  );
}

/**
 * Rewrites the stored objects of a created or changed CRD with its schema's defaults, in place (same
 * resourceVersion, no event): kube-apiserver applies defaults to what it reads from storage, so a
 * default added to a schema shows on the next read of an object written before.
 */
function defaultStoredObjects(ctx: CrdLifecycleContext, crd: KubeObject): void {
  const stateKey = stateKeyOf(crd);
  if (stateKey === undefined) return;
  for (const e of ctx.state.entries(stateKey)) {
    const stored = JSON.parse(e.json) as KubeObject;
    const cr = ctx.registry.customResourceOf(stateKey, stored.apiVersion);
    if (cr?.schema === undefined) continue;
    const read = defaultedOnRead(cr, stored);
    if (JSON.stringify(read) !== e.json) ctx.state.rewrite(stateKey, read);
  }
}

/** The paths (the validator's: `spec`, `spec.items[*]`, `<nil>` for the object) of the schema nodes that carry `x-kubernetes-validations`. */
function celRulePaths(schema: unknown, path: string, out: string[]): string[] {
  if (schema === null || typeof schema !== 'object') return out;
  const node = schema as { properties?: Record<string, unknown>; items?: unknown; additionalProperties?: unknown; 'x-kubernetes-validations'?: unknown };
  if (Array.isArray(node['x-kubernetes-validations']) && node['x-kubernetes-validations'].length > 0) out.push(path === '' ? '<nil>' : path);
  for (const [key, sub] of Object.entries(node.properties ?? {})) celRulePaths(sub, path === '' ? key : `${path}.${key}`, out);
  celRulePaths(node.items, `${path}[*]`, out);
  celRulePaths(node.additionalProperties, `${path}[*]`, out);
  return out;
}

/**
 * Warns, once per CRD generation and version, that the version's CEL rules (`x-kubernetes-validations`)
 * are not evaluated: the fake stores objects kube-apiserver would refuse for them.
 */
function warnOfCelRules(ctx: CrdLifecycleContext, crd: KubeObject, warned: Set<string>): void {
  const versions = (crd as { spec?: { versions?: unknown } }).spec?.versions;
  if (!Array.isArray(versions)) return;
  const name = crd.metadata?.name ?? '';
  for (const v of versions as Array<{ name?: unknown; schema?: { openAPIV3Schema?: unknown } }>) {
    const rules = celRulePaths(v?.schema?.openAPIV3Schema, '', []);
    const key = `${crd.metadata?.uid ?? name}/${crd.metadata?.generation ?? 0}/${String(v?.name)}`;
    if (rules.length === 0 || warned.has(key)) continue;
    warned.add(key);
    ctx.logger.warn(
      `FakeApiServer: CustomResourceDefinition ${name} version ${String(v?.name)} has x-kubernetes-validations (CEL) rules at ${rules.join(', ')}: ` +
        'the fake does not evaluate them and stores objects kube-apiserver refuses for them; test them against kube-apiserver (kube-informer/envtest)',
      { crd: name, version: String(v?.name), rules: rules.join(', ') },
    );
  }
}

/** Follows the stored CRDs: call once per server; returns the unsubscribe function. */
export function followCustomResourceDefinitions(ctx: CrdLifecycleContext): () => void {
  const warned = new Set<string>();
  return ctx.state.subscribe(CRD_STATE_KEY, (change: StateChange) => {
    const crd = JSON.parse(change.entry.json) as KubeObject;
    if (change.type === 'DELETED') {
      deleteObjectsOf(ctx, crd);
      return;
    }
    warnOfCelRules(ctx, crd, warned);
    defaultStoredObjects(ctx, crd);
  });
}
