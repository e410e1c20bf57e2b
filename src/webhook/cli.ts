// The `kube-informer-webhook` command: `manifests` prints, as YAML, the webhook configurations a module exports.

import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withCaBundle } from './apply.js';
import { manifestYaml } from './manifests.js';

/** Where the command writes, and where it resolves relative paths from. */
export interface WebhookCommandIo {
  /** Receives the output (YAML). */
  stdout: (text: string) => void;
  /** Receives errors and the usage. */
  stderr: (text: string) => void;
  /** The directory relative paths are resolved from. */
  cwd: string;
}

const USAGE = `usage:
  kube-informer-webhook manifests <module>... [--ca-file <ca.pem>]
      YAML of every ValidatingWebhookConfiguration and MutatingWebhookConfiguration each module exports
      (an object, or a list of them), in export order; --ca-file sets the caBundle of every webhook
      that has none (omit it when cert-manager's CA injector fills it in)
`;

const KINDS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);

function configurationsIn(value: unknown): object[] {
  if (Array.isArray(value)) return value.flatMap(configurationsIn);
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof value === 'object' && value !== null && typeof kind === 'string' && KINDS.has(kind) ? [value] : [];
}

/**
 * Runs `kube-informer-webhook <command> ...` with `argv` (the words after the program); resolves with
 * the exit code: 0, 1 for a failure (the reason on stderr), 2 for a usage error.
 */
export async function runWebhookCommand(argv: readonly string[], io: WebhookCommandIo): Promise<number> {
  const args = [...argv];
  const command = args.shift();
  if (command !== 'manifests') {
    io.stderr(`kube-informer-webhook: ${command === undefined ? 'no command' : `unknown command ${command}`}\n${USAGE}`);
    return 2;
  }
  const at = args.indexOf('--ca-file');
  const caFile = at < 0 ? undefined : args.splice(at, 2)[1];
  if ((at >= 0 && (caFile === undefined || caFile.startsWith('--'))) || args.length === 0 || args.some((a) => a.startsWith('--'))) {
    io.stderr(`kube-informer-webhook manifests: ${args.length === 0 ? 'needs at least one module' : 'bad arguments'}\n${USAGE}`);
    return 2;
  }
  try {
    const caBundle = caFile === undefined ? undefined : (await readFile(resolve(io.cwd, caFile))).toString('base64');
    const objects: object[] = [];
    for (const path of args) {
      const mod = (await import(pathToFileURL(isAbsolute(path) ? path : resolve(io.cwd, path)).href)) as Record<string, unknown>;
      const found = Object.values(mod).flatMap(configurationsIn);
      if (found.length === 0) throw new Error(`${path} exports no ValidatingWebhookConfiguration or MutatingWebhookConfiguration`);
      objects.push(...found);
    }
    io.stdout(manifestYaml(objects.map((o) => withCaBundle(o as Parameters<typeof withCaBundle>[0], caBundle))));
    return 0;
  } catch (err) {
    io.stderr(`kube-informer-webhook manifests: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
