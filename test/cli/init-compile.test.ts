// The projects `kube-informer init` writes compile under their own strict tsconfig against the package's entry points (their sources, no build): every choice of webhooks and certificates.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { initProject, type InitOptions } from '../../src/cli/init.js';
import { entryPointPaths, repoRoot } from '../docs/compile.js';

// Under the repository (.cache/ is ignored by git), so the projects' other imports — client-node,
// prom-client, vitest, kubernetes-types, @types/node — resolve from its node_modules.
mkdirSync(join(repoRoot, '.cache'), { recursive: true });
const root = mkdtempSync(join(repoRoot, '.cache', 'init-compile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const choices: Array<[string, Omit<InitOptions, 'name'>]> = [
  ['plain', {}],
  ['cert-manager', { webhooks: ['validating', 'defaulting', 'conversion'], certificates: 'cert-manager' }],
  ['self-managed', { webhooks: ['validating', 'conversion'], certificates: 'self-managed', kind: 'Widget', group: 'widgets.example.com' }],
  ['one webhook', { webhooks: ['defaulting'] }],
  ['conversion alone', { webhooks: ['conversion'], certificates: 'self-managed' }],
];

/** The `.ts` files under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

describe('the projects init writes', () => {
  it('compile under their strict tsconfig, with kube-informer resolved to its entry points', async () => {
    const files: string[] = [];
    let config: ts.ParsedCommandLine | undefined;
    for (const [i, [, options]] of choices.entries()) {
      const dir = join(root, `p${i}`);
      await initProject(dir, { name: `p${i}-operator`, ...options });
      files.push(...sources(join(dir, 'src')), ...sources(join(dir, 'test')));
      // The project's own compiler options (strict, NodeNext), the package's names mapped to its sources.
      config ??= ts.getParsedCommandLineOfConfigFile(join(dir, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    }
    const paths = Object.fromEntries(Object.entries(entryPointPaths()).map(([name, [file]]) => [name, [join(repoRoot, file!)]]));
    const program = ts.createProgram({ rootNames: files, options: { ...config!.options, paths, noEmit: true } });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file === undefined ? '' : `${d.file.fileName.slice(root.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: `;
      return `${where}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
    expect(config!.options.strict).toBe(true);
    expect(files.length).toBeGreaterThan(40);
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
