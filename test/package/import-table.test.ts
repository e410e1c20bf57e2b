// The import table (CONTRIBUTING.md, .dependency-cruiser.cjs) is enforced: `npm run lint` fails on an
// import against a row, a side door, a file circle or a folder without a row (checked on a small tree),
// and on an `export *` in an entry point.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint, Linter } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..'); // src/ itself is checked by `npm run lint`
const config = join(root, '.dependency-cruiser.cjs');
const cli = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** One reported violation, as `rule: from -> to`. */
type Violation = string;

/**
 * Runs what `npm run imports` runs (the `err` reporter, whose exit status counts the errors) over
 * `src/` in `cwd`; returns the exit status and the violations it printed.
 */
function check(cwd: string): { status: number | null; violations: Violation[] } {
  const run = spawnSync(process.execPath, [cli, 'src', '--config', config, '--output-type', 'err'], { cwd, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  const violations = Array.from(`${run.stdout}${run.stderr}`.matchAll(/error ([\w-]+): (\S+) →\s+(\S+)/g), (m) => `${m[1]}: ${m[2]} -> ${m[3]}`);
  return { status: run.status, violations };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A throw-away project: a tsconfig like ours and the given files under src/. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'import-table-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), text);
  }
  return dir;
}

const barrel = (name: string): string => `export const ${name} = 1;\n`;

describe('the import table check', () => {
  it('fails on an import against the table, a side door, a contract bypassed, a file circle and a folder without a row', () => {
    const dir = project({
      'core/index.ts': barrel('core'),
      'informer/index.ts': barrel('informer'),
      'listwatch/index.ts': "export { types } from './types.js';\nexport { decode } from './decoder.js';\n",
      'listwatch/decoder.ts': barrel('decode'),
      'listwatch/types.ts': barrel('types'),
      'listwatch/chunk-source.ts': barrel('chunks'),
      // fifo/'s row is core (and runtime): the informer assembles the fifo, never the other way.
      'fifo/delta-fifo.ts': "import { informer } from '../informer/index.js';\nexport const fifo = informer;\n",
      // chunk-source.ts is not re-exported by listwatch's index.ts (the contract).
      'reflector/watch-stream.ts': "import { chunks } from '../listwatch/chunk-source.js';\nexport const stream = chunks;\n",
      // decoder.ts is a door of listwatch, but the reflector reads only the ListerWatcher contract.
      'reflector/driver.ts': "import { decode } from '../listwatch/decoder.js';\nimport { types } from '../listwatch/types.js';\nexport const driver = decode + types;\n",
      'store/a.ts': "import { b } from './b.js';\nexport const a = (): number => b();\n",
      'store/b.ts': "import { a } from './a.js';\nexport const b = (): number => a();\n",
      'newroom/x.ts': "import { core } from '../core/index.js';\nexport const x = core;\n",
      // Allowed: the informer imports the fifo's and listwatch's contracts, every room imports core.
      'informer/uses.ts': "import { types } from '../listwatch/index.js';\nimport { core } from '../core/index.js';\nexport const uses = types + core;\n",
    });
    const { status, violations } = check(dir);
    expect(status).not.toBe(0);
    const found = violations;
    expect(found).toContain('import-table-fifo: src/fifo/delta-fifo.ts -> src/informer/index.ts');
    expect(found).toContain('no-side-door-listwatch: src/reflector/watch-stream.ts -> src/listwatch/chunk-source.ts');
    expect(found).toContain('contract-reflector-listwatch: src/reflector/driver.ts -> src/listwatch/decoder.ts');
    expect(found.filter((f) => f.endsWith('-> src/listwatch/types.ts'))).toEqual([]);
    expect(found).toContain('no-circular: src/store/a.ts -> src/store/b.ts');
    expect(found).toContain('unknown-room: src/newroom/x.ts -> src/core/index.ts');
    expect(found.filter((f) => f.includes('src/informer/uses.ts'))).toEqual([]);
  });

  it('passes on a tree that keeps the table, and runtime/ may import only core and observability', () => {
    const ok = check(project({
      'core/index.ts': barrel('core'),
      'observability/index.ts': barrel('observability'),
      'runtime/index.ts': "import { core } from '../core/index.js';\nimport { observability } from '../observability/index.js';\nexport const runtime = core + observability;\n",
      'workqueue/index.ts': "import { runtime } from '../runtime/index.js';\nexport const queue = runtime;\n",
    }));
    expect(ok.violations).toEqual([]);
    expect(ok.status).toBe(0);
    const bad = check(project({
      'store/index.ts': barrel('store'),
      'runtime/index.ts': "import { store } from '../store/index.js';\nexport const runtime = store;\n",
    }));
    expect(bad.violations).toEqual(['import-table-runtime: src/runtime/index.ts -> src/store/index.ts']);
    expect(bad.status).not.toBe(0);
  });

  it('lets the command reach crd/, webhook/ and envtest/ through their command files alone, and no other room reach envtest/', () => {
    const dir = project({
      'core/index.ts': barrel('core'),
      'crd/index.ts': "export { define } from './define.js';\n",
      'crd/define.ts': barrel('define'),
      'crd/cli.ts': "import { define } from './define.js';\nexport const generate = define;\n",
      'envtest/index.ts': barrel('envtest'),
      'envtest/command.ts': barrel('use'),
      'webhook/index.ts': barrel('webhook'),
      'webhook/cli.ts': barrel('manifests'),
      'informer/index.ts': "import { use } from '../envtest/command.js';\nexport const informer = use;\n",
      // Allowed: the command files, listed as shared internals of their rooms.
      'cli/main.ts': "export const load = [() => import('../crd/cli.js'), () => import('../webhook/cli.js'), () => import('../envtest/command.js')];\n",
      // Refused: the public barrel would load TypeBox (crd) for every subcommand.
      'cli/crd.ts': "import { define } from '../crd/index.js';\nexport const c = define;\n",
    });
    const { status, violations } = check(dir);
    expect(status).not.toBe(0);
    expect(violations.filter((v) => v.includes('src/cli/main.ts'))).toEqual([]);
    expect(violations).toContain('contract-cli-crd: src/cli/crd.ts -> src/crd/index.ts');
    expect(violations).toContain('import-table-informer: src/informer/index.ts -> src/envtest/command.ts');
  });
});

describe('entry points name what they export', () => {
  it('lint refuses `export *` in every entry point of package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const entries = Object.values(pkg.exports)
      .map((t) => (typeof t === 'object' && t !== null ? (t as { default?: string }).default : undefined))
      .filter((t): t is string => t?.startsWith('./dist/') === true)
      .map((t) => t.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    expect(entries).toContain('src/cache.ts');
    expect(entries).toContain('src/operations/index.ts');
    const eslint = new ESLint({ cwd: root });
    const linter = new Linter();
    for (const entry of entries) {
      const config = (await eslint.calculateConfigForFile(entry)) as { rules: Record<string, Linter.RuleEntry> };
      const rule = config.rules['no-restricted-syntax'];
      const messages = linter.verify("export * from './x.js';\nexport { y } from './y.js';\n", { rules: { 'no-restricted-syntax': rule } });
      expect(messages.map((m) => `${entry}:${m.line}`), entry).toEqual([`${entry}:1`]);
    }
  });
});
