// The user's module a command reads (`crd generate`, `webhook manifests`): JavaScript imported as is, TypeScript by Node's own type stripping or the project's tsx, else an error that says what to run.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** How a module is imported; replaced in tests. */
export interface ModuleLoader {
  /** Imports a `file:` URL. Default: `import()`. */
  importUrl(url: string): Promise<Record<string, unknown>>;
  /** The path of `tsx/esm/api` as the user's project resolves it (from `cwd`), or undefined when tsx is not installed there. */
  findTsx(cwd: string): string | undefined;
  /** Imports a `file:` URL through tsx's `tsImport` (the module at `tsxApi`), without registering tsx for anything else. */
  importWithTsx(tsxApi: string, url: string): Promise<Record<string, unknown>>;
  /** `process.features.typescript`: `'strip'` or `'transform'` when this Node loads TypeScript itself, else false. */
  nodeTypeScript: string | false;
  /** `process.versions.node`. */
  nodeVersion: string;
}

/** The loader of the running process. */
export const defaultLoader: ModuleLoader = {
  importUrl: (url) => import(url) as Promise<Record<string, unknown>>,
  findTsx(cwd) {
    let manifest: string;
    try {
      manifest = createRequire(join(cwd, 'package.json')).resolve('tsx/package.json');
    } catch {
      return undefined;
    }
    // The `import` condition of tsx's `./esm/api` export (require.resolve would give its CommonJS build).
    let target: unknown = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> }).exports?.['./esm/api'];
    while (typeof target === 'object' && target !== null) target = (target as { import?: unknown; default?: unknown }).import ?? (target as { default?: unknown }).default;
    return typeof target === 'string' ? join(dirname(manifest), target) : undefined;
  },
  async importWithTsx(tsxApi, url) {
    const api = (await import(pathToFileURL(tsxApi).href)) as { tsImport?: (specifier: string, parent: string) => Promise<Record<string, unknown>> };
    if (typeof api.tsImport !== 'function') throw new Error(`${tsxApi} has no tsImport (tsx 4.8 or later has it)`);
    return api.tsImport(url, import.meta.url);
  },
  nodeTypeScript: (process.features as { typescript?: string | false }).typescript ?? false,
  nodeVersion: process.versions.node,
};

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

/** Errors of an import that a TypeScript loader would have avoided. */
const NEEDS_LOADER = new Set(['ERR_UNKNOWN_FILE_EXTENSION', 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX', 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING', 'ERR_MODULE_NOT_FOUND', 'ERR_INVALID_TYPESCRIPT_SYNTAX']);

/**
 * Imports the module at `path` (relative to `cwd`) and resolves with its exports. A TypeScript file
 * (`.ts`, `.mts`, `.cts`) is imported as is when the process can (Node ≥ 22.18's type stripping, or a
 * loader already registered); when it cannot, through the project's own `tsx` when it is installed;
 * else the error names the file and says what to run. `commandLine` is the command as typed, for that
 * message.
 */
export async function loadUserModule(path: string, cwd: string, commandLine: string, loader: ModuleLoader = defaultLoader): Promise<Record<string, unknown>> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(file)) throw new Error(`${path}: no such file (looked at ${file})`);
  const url = pathToFileURL(file).href;
  if (!TYPESCRIPT.has(extname(file))) return loader.importUrl(url);
  let first: Error & { code?: string };
  try {
    return await loader.importUrl(url);
  } catch (err) {
    first = err as Error & { code?: string };
    if (!NEEDS_LOADER.has(first.code ?? '')) throw err;
  }
  const tsx = loader.findTsx(cwd);
  if (tsx !== undefined) return loader.importWithTsx(tsx, url);
  throw new Error(cannotLoad(path, commandLine, loader, first));
}

/** What to run when a TypeScript module cannot be imported here. */
function cannotLoad(path: string, commandLine: string, loader: ModuleLoader, err: Error & { code?: string }): string {
  const compiled = path.replace(/\.([mc]?)ts$/, '.$1js');
  const why =
    loader.nodeTypeScript === false
      ? `Node ${loader.nodeVersion} cannot import TypeScript by itself (Node 22.18 and later strip types)`
      : err.code === 'ERR_MODULE_NOT_FOUND'
        ? `Node ${loader.nodeVersion} strips its types but does not map an import of './x.js' to x.ts (${err.message.split('\n')[0]})`
        : `Node ${loader.nodeVersion} cannot strip its types (${err.message.split('\n')[0]})`;
  return [
    `${path} is TypeScript: ${why}, and tsx is not installed in this project. Either:`,
    `  npm install --save-dev tsx   and run \`npx ${commandLine}\` again: it imports TypeScript through the project's tsx`,
    `  or compile it first and pass the JavaScript: \`npx tsc\`, then \`npx ${commandLine.replace(path, compiled)}\` (the path in your outDir)`,
  ].join('\n');
}
