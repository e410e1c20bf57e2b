// The `kube-informer crd` command: `generate` writes CRD YAML from definitions, `types` writes TypeScript from CRDs.

import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { resources } from '../core/resources.js';
import { newResourceClient } from '../listwatch/index.js';
import { crdTypes } from './types-gen.js';

/** Where the command writes, and where it resolves relative paths from. */
export interface CommandIo {
  /** Receives the output (YAML or TypeScript). */
  stdout: (text: string) => void;
  /** Receives notes and errors. */
  stderr: (text: string) => void;
  /** The directory relative paths are resolved from. */
  cwd: string;
}

const USAGE = `usage:
  kube-informer crd generate <module>...           CRD YAML for every exported defineCustomResource(...) of each module
  kube-informer crd types <crd.yaml>... [--import-from <module>]
  kube-informer crd types --name <crd-name> [--kubeconfig <file>] [--import-from <module>]
                                                   TypeScript types and descriptors from CRDs (a file, or a cluster)
`;

function isDefinition(value: unknown): value is { crd: CustomResourceDefinition } {
  if (typeof value !== 'object' || value === null || !('crd' in value)) return false;
  const crd = (value).crd;
  return typeof crd === 'object' && crd !== null && (crd as { kind?: unknown }).kind === 'CustomResourceDefinition';
}

/** The CRD YAML (one document per definition, `---` between) of every definition a module exports, in export order. */
export async function generateYaml(modulePaths: readonly string[], cwd: string): Promise<string> {
  const docs: string[] = [];
  for (const path of modulePaths) {
    const url = pathToFileURL(isAbsolute(path) ? path : resolve(cwd, path)).href;
    const mod = (await import(url)) as Record<string, unknown>;
    const defs = Object.values(mod).filter(isDefinition);
    if (defs.length === 0) throw new Error(`${path} exports no custom resource definition (a defineCustomResource(...) result)`);
    for (const def of defs) docs.push(stringify(def.crd, { lineWidth: 0 }));
  }
  return docs.join('---\n');
}

/** The CustomResourceDefinitions among the YAML documents of `text` (other kinds are skipped). */
export function parseCrds(text: string, source: string): CustomResourceDefinition[] {
  const out: CustomResourceDefinition[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0].message}`);
    const value = doc.toJS() as { kind?: string } | null;
    if (value?.kind === 'CustomResourceDefinition') out.push(value as CustomResourceDefinition);
  }
  return out;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  args.splice(i, 2);
  return value;
}

async function fromCluster(name: string, kubeconfig: string | undefined): Promise<CustomResourceDefinition> {
  const { KubeConfig } = await import('@kubernetes/client-node');
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

/**
 * Runs `kube-informer crd <generate|types> ...` with `argv` (the words after `crd`); resolves with the
 * exit code: 0, 1 for a failure (the reason on stderr), 2 for a usage error.
 */
export async function runCrdCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = [...argv];
  const command = args.shift();
  try {
    if (command === 'generate') {
      if (args.length === 0) throw new UsageError('generate needs at least one module');
      io.stdout(await generateYaml(args, io.cwd));
      return 0;
    }
    if (command === 'types') {
      const importFrom = option(args, '--import-from');
      const name = option(args, '--name');
      const kubeconfig = option(args, '--kubeconfig');
      const crds: CustomResourceDefinition[] = [];
      let source: string;
      if (name !== undefined) {
        crds.push(await fromCluster(name, kubeconfig));
        source = `the cluster's CustomResourceDefinition ${name}`;
      } else {
        if (args.length === 0) throw new UsageError('types needs a CRD file or --name');
        for (const file of args) crds.push(...parseCrds(await readFile(resolve(io.cwd, file), 'utf8'), file));
        if (crds.length === 0) throw new Error(`${args.join(', ')}: no CustomResourceDefinition found`);
        source = args.join(', ');
      }
      const generated = crdTypes(crds, source, importFrom);
      for (const note of generated.notes) io.stderr(`note: ${note}\n`);
      io.stdout(generated.source);
      return 0;
    }
    throw new UsageError(command === undefined ? 'no command' : `unknown command ${command}`);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`kube-informer crd: ${err.message}\n${USAGE}`);
      return 2;
    }
    io.stderr(`kube-informer crd ${command ?? ''}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

class UsageError extends Error {}
