// No import circle anywhere in the repository: `npm run imports` (part of `npm run lint`) runs
// dependency-cruiser's no-circular rule over every folder of code, not only src/. Proven here by planting
// a circle in each folder of a small tree and running the command package.json names.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
/** The folders of code tsconfig.json type-checks, and scripts/ (plain .mjs too). */
const FOLDERS = ['src', 'bench', 'soak', 'scripts', 'examples', 'test'];

/** `npm run imports` as package.json says it, run with node in `cwd` against this repository's config. */
function runImports(cwd: string): { status: number | null; circles: string[] } {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.imports;
  const [bin, ...args] = script.split(/\s+/);
  expect(bin).toBe('depcruise');
  const argv = args.map((a) => (a === '.dependency-cruiser.cjs' ? join(root, a) : a));
  const run = spawnSync(process.execPath, [cli, ...argv], { cwd, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  const circles = Array.from(`${run.stdout}${run.stderr}`.matchAll(/error no-circular: (\S+) →/g), (m) => m[1]);
  return { status: run.status, circles };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A throw-away project: a tsconfig like ours and the given files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'import-circles-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, allowJs: true }, include: FOLDERS }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Two files of `folder` that import each other (type-only on one side in TypeScript: it counts). */
function circle(folder: string): Record<string, string> {
  return {
    [`${folder}/lib/a.ts`]: "import { b } from './b.js';\nexport const a = (): unknown => b;\n",
    [`${folder}/lib/b.ts`]: "import type { a } from './a.js';\nexport const b: typeof a | undefined = undefined;\n",
  };
}

describe('the import circle check', () => {
  it('passes a tree without circles', () => {
    const dir = project({
      'src/core/index.ts': 'export const core = 1;\n',
      'bench/lib/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'bench/lib/b.ts': "import { core } from '../../src/core/index.js';\nexport const b = core;\n",
      'soak/x.ts': 'export const x = 1;\n',
      'scripts/x.mjs': 'export const x = 1;\n',
      'examples/x.ts': 'export const x = 1;\n',
      'test/x.test.ts': "import { a } from '../bench/lib/a.js';\nexport const t = a;\n",
    });
    expect(runImports(dir)).toEqual({ status: 0, circles: [] });
  });

  it('refuses a circle in every folder of code, src/ or not', () => {
    const dir = project({
      'src/core/index.ts': 'export const core = 1;\n',
      ...circle('src/core'),
      ...circle('bench'),
      ...circle('soak'),
      'scripts/lib/a.mjs': "import { b } from './b.mjs';\nexport const a = () => b;\n",
      'scripts/lib/b.mjs': "import { a } from './a.mjs';\nexport const b = () => a;\n",
      ...circle('examples'),
      ...circle('test'),
      // Around three files, as bench/lib/args.ts → operator-phase.ts → real-phase.ts → args.ts was.
      'bench/three/args.ts': "import { phase } from './phase.js';\nexport const args = phase;\n",
      'bench/three/phase.ts': "import type { Real } from './real.js';\nexport const phase: Real | 1 = 1;\n",
      'bench/three/real.ts': "import type { args } from './args.js';\nexport type Real = typeof args;\n",
    });
    const { status, circles } = runImports(dir);
    expect(status).not.toBe(0);
    for (const folder of ['src/core', 'bench', 'soak', 'examples', 'test']) expect(circles).toContain(`${folder}/lib/a.ts`);
    expect(circles).toContain('scripts/lib/a.mjs');
    expect(circles).toContain('bench/three/args.ts');
  });
});
