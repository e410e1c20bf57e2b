// The work behind `kube-informer crd` (the command itself is src/cli/crd.ts): CRD YAML from the definitions a module exports, CRDs read from YAML files or a cluster.

import { stringify } from 'yaml';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { deepEqual } from '../core/index.js';
import { parseCustomResourceDefinitions } from './files.js';
import { resources } from '../core/resources.js';

export { crdTypes } from './types-gen.js';
export { checkNames } from './define.js';

/** A module the command imported: the path as given, and its exports. */
export interface LoadedModule {
  /** The path as the user typed it (for messages). */
  path: string;
  /** The module's exports by name. */
  exports: Record<string, unknown>;
}

/** What `crd generate` prints: the YAML, and the warnings for stderr. */
export interface GeneratedYaml {
  /** One YAML document per definition, `---` between them. */
  yaml: string;
  /** One line each, without a trailing newline. */
  warnings: string[];
}

function isDefinition(value: unknown): value is { crd: CustomResourceDefinition } {
  if (typeof value !== 'object' || value === null || !('crd' in value)) return false;
  const crd = value.crd;
  return typeof crd === 'object' && crd !== null && (crd as { kind?: unknown }).kind === 'CustomResourceDefinition';
}

/**
 * The CRD YAML (one document per definition, `---` between) of every definition the modules export
 * (a `defineCustomResource(...)` result, or any `{ crd }` holding a CustomResourceDefinition), in
 * export order; throws naming a module that exports none.
 */
export function generateYaml(modules: readonly LoadedModule[]): GeneratedYaml {
  const docs: string[] = [];
  const warnings: string[] = [];
  for (const { path, exports } of modules) {
    const defs = Object.values(exports).filter(isDefinition);
    if (defs.length === 0) throw new Error(`${path} exports no custom resource definition (a defineCustomResource(...) result)`);
    for (const def of defs) {
      docs.push(stringify(def.crd, { lineWidth: 0 }));
      const warning = conversionWarning(def.crd);
      if (warning !== undefined) warnings.push(warning);
    }
  }
  return { yaml: docs.join('---\n'), warnings };
}

/**
 * The warning for a CRD that serves versions with different schemas under conversion strategy `None`:
 * the API server then rewrites only `apiVersion`, so an object written at one version is served at the
 * other with the wrong shape. Undefined when a conversion webhook is attached or the schemas agree.
 */
export function conversionWarning(crd: CustomResourceDefinition): string | undefined {
  if ((crd.spec.conversion?.strategy ?? 'None') !== 'None') return undefined;
  const served = crd.spec.versions.filter((v) => v.served);
  if (served.length < 2) return undefined;
  const first = served[0].schema?.openAPIV3Schema;
  if (served.every((v) => deepEqual(v.schema?.openAPIV3Schema, first))) return undefined;
  return (
    `CustomResourceDefinition ${crd.metadata?.name ?? crd.spec.names.plural} serves ${served.length} versions with different schemas ` +
    `(${served.map((v) => v.name).join(', ')}) under conversion strategy None: the API server converts between them by rewriting apiVersion only. ` +
    `Serve a conversion webhook (conversionWebhook of kube-informer/webhook) and export the definition with ` +
    `spec.conversion = crdConversion({ endpoint, path }) instead (docs/custom-resources.md, "Conversion between versions")`
  );
}

/**
 * The CustomResourceDefinitions among the YAML documents of `text` (other kinds are skipped), read as
 * envtest and kubectl read them (crd/files.ts: plain data, YAML 1.1 with merge keys); `source` names the
 * file in errors.
 */
export function parseCrds(text: string, source: string): CustomResourceDefinition[] {
  return parseCustomResourceDefinitions(text, source, { otherKinds: 'skip' });
}

/** The CustomResourceDefinition `name` as the cluster of `kubeconfig` (default: the usual kubeconfig) has it. */
export async function crdFromCluster(name: string, kubeconfig: string | undefined): Promise<CustomResourceDefinition> {
  // Loaded here, not at the top: `kube-informer init` shares this file's name checks and must not load client-node.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { newResourceClient } = await import('../listwatch/index.js');
  const kc = new KubeConfig();
  if (kubeconfig === undefined) kc.loadFromDefault();
  else kc.loadFromFile(kubeconfig);
  const client = newResourceClient(kc, resources.customresourcedefinitions);
  try {
    return await client.get(name);
  } finally {
    client.close();
  }
}
