// A user's module for `crd generate` / `webhook manifests`: TypeScript loaded where the process can, through the project's tsx on Node 20, else an error that says exactly what to run.

import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultLoader, loadUserModule, type ModuleLoader } from '../../src/cli/load-module.js';

const repo = resolve(import.meta.dirname, '../..');
const fixtures = join(import.meta.dirname, 'fixtures');
const elsewhere = mkdtempSync(join(tmpdir(), 'ki-load-module-')); // a project without tsx
afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

/** Node 20 as a user runs it: `import()` of a .ts fails as Node 20 fails it. */
function node20(over: Partial<ModuleLoader> = {}): ModuleLoader {
  return {
    ...defaultLoader,
    importUrl: async (url) => {
      if (url.endsWith('.ts')) throw Object.assign(new TypeError(`Unknown file extension ".ts" for ${url}`), { code: 'ERR_UNKNOWN_FILE_EXTENSION' });
      return defaultLoader.importUrl(url);
    },
    nodeTypeScript: false,
    nodeVersion: '20.19.6',
    ...over,
  };
}

describe('loadUserModule', () => {
  it('imports JavaScript as is, and TypeScript where the process can (here: vitest\'s transform)', async () => {
    writeFileSync(join(elsewhere, 'plain.mjs'), 'export const n = 1;\n');
    expect(await loadUserModule('plain.mjs', elsewhere, 'kube-informer crd generate plain.mjs')).toMatchObject({ n: 1 });
    const mod = await loadUserModule('backup.ts', fixtures, 'kube-informer crd generate backup.ts');
    expect((mod.backups as { crd: { metadata: { name: string } } }).crd.metadata.name).toBe('backups.example.com');
  });

  it('on Node 20 without tsx: names the file and says exactly what to run', async () => {
    const error = await loadUserModule('./src/backup.ts', elsewhere, 'kube-informer crd generate ./src/backup.ts', node20({ findTsx: () => undefined })).catch((e: unknown) => e);
    // (the file must exist: a missing one is reported as missing)
    expect((error as Error).message).toBe(`./src/backup.ts: no such file (looked at ${join(elsewhere, 'src/backup.ts')})`);
    const found = await loadUserModule('backup.ts', fixtures, 'kube-informer crd generate backup.ts', node20({ findTsx: () => undefined })).catch((e: unknown) => e);
    expect((found as Error).message).toBe(
      [
        'backup.ts is TypeScript: Node 20.19.6 cannot import TypeScript by itself (Node 22.18 and later strip types), and tsx is not installed in this project. Either:',
        "  npm install --save-dev tsx   and run `npx kube-informer crd generate backup.ts` again: it imports TypeScript through the project's tsx",
        '  or compile it first and pass the JavaScript: `npx tsc`, then `npx kube-informer crd generate backup.js` (the path in your outDir)',
      ].join('\n'),
    );
  });

  it("on Node 20 with the project's tsx: imports the .ts through it (its `.js` imports of .ts files too)", async () => {
    let used = '';
    const loader = node20({
      importWithTsx: (api, url) => {
        used = api;
        return defaultLoader.importWithTsx(api, url);
      },
    });
    const mod = await loadUserModule(join(fixtures, 'backup.ts'), repo, 'kube-informer crd generate backup.ts', loader);
    expect(used).toBe(join(realpathSync(join(repo, 'node_modules/tsx')), 'dist/esm/api/index.mjs'));
    const crd = (mod.backups as { crd: { spec: { versions: Array<{ name: string }> } } }).crd;
    expect(crd.spec.versions.map((v) => v.name)).toEqual(['v2', 'v1']);
    expect(defaultLoader.findTsx(elsewhere)).toBeUndefined();
  });

  it('on a Node that strips types: says why an import of a .js that is a .ts fails, and what to run', async () => {
    const loader: ModuleLoader = {
      ...defaultLoader,
      importUrl: async () => {
        throw Object.assign(new Error("Cannot find module '/p/src/types.js' imported from /p/src/backup.ts"), { code: 'ERR_MODULE_NOT_FOUND' });
      },
      findTsx: () => undefined,
      nodeTypeScript: 'strip',
      nodeVersion: '22.19.0',
    };
    const error = (await loadUserModule('backup.ts', fixtures, 'kube-informer crd generate backup.ts', loader).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("backup.ts is TypeScript: Node 22.19.0 strips its types but does not map an import of './x.js' to x.ts (Cannot find module '/p/src/types.js' imported from /p/src/backup.ts)");
    expect(error.message).toContain('npm install --save-dev tsx');
  });

  it("rethrows a module's own failure unchanged (a loader would not help)", async () => {
    writeFileSync(join(elsewhere, 'throws.ts'), 'export const x = 1;\n');
    const own = new Error('defineCustomResource: versions: at least one version is required');
    const loader = node20({ importUrl: () => Promise.reject(own), findTsx: () => undefined });
    await expect(loadUserModule('throws.ts', elsewhere, 'kube-informer crd generate throws.ts', loader)).rejects.toBe(own);
  });
});
