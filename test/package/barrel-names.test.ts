// The side-door check by name (issue 47): dependency-cruiser (.dependency-cruiser.cjs) checks that a
// file imported from another room is one its index.ts re-exports; this checks that every NAME imported
// (or re-exported) across rooms is one the room's barrel exports, so a door cannot hand out an internal.
// Files the table lists as shared internals or contracts (SHARED_INTERNALS, CONTRACTS) are exempt.

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The exemptions of the import table: room → files another room may import whatever they export. */
interface Table {
  SHARED_INTERNALS: Record<string, string[]>;
  CONTRACTS: Record<string, Record<string, string[]>>;
}
const { table } = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { table: Table };

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The names imported or re-exported by one declaration (`*` for a namespace import or `export *`). */
function namesOf(node: ts.ImportDeclaration | ts.ExportDeclaration): string[] {
  if (ts.isExportDeclaration(node)) {
    if (node.exportClause === undefined) return ['*'];
    if (ts.isNamespaceExport(node.exportClause)) return ['*'];
    return node.exportClause.elements.map((e) => (e.propertyName ?? e.name).text);
  }
  const clause = node.importClause;
  if (clause === undefined) return [];
  const names = clause.name === undefined ? [] : ['default'];
  if (clause.namedBindings === undefined) return names;
  if (ts.isNamespaceImport(clause.namedBindings)) return [...names, '*'];
  return [...names, ...clause.namedBindings.elements.map((e) => (e.propertyName ?? e.name).text)];
}

/** Every cross-room import of a name the imported room's barrel does not export, as `from -> to: name`. */
export function sideDoorNames(srcDir: string, exempt: Table = table): string[] {
  const files = tsFiles(srcDir);
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, skipLibCheck: true, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const barrels = new Map<string, Set<string>>();
  const barrelNames = (room: string): Set<string> => {
    let names = barrels.get(room);
    if (names === undefined) {
      const source = program.getSourceFile(join(srcDir, room, 'index.ts'));
      const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
      names = new Set(symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name));
      barrels.set(room, names);
    }
    return names;
  };
  const found: string[] = [];
  for (const file of files) {
    const [from, ...rest] = relative(srcDir, file).split(sep);
    if (rest.length === 0) continue; // an entry point at the top of src/ (dependency-cruiser: barrels only)
    const source = program.getSourceFile(file);
    if (source === undefined) continue;
    for (const node of source.statements) {
      if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || node.moduleSpecifier === undefined) continue;
      const spec = (node.moduleSpecifier as ts.StringLiteral).text;
      if (!spec.startsWith('.')) continue;
      const target = relative(srcDir, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))).split(sep);
      const [room, ...inside] = target;
      if (room === from || inside.length === 0 || room.startsWith('..')) continue;
      const path = inside.join('/');
      if (path === 'index.ts' || exempt.SHARED_INTERNALS[room]?.includes(path) || exempt.CONTRACTS[from]?.[room]?.includes(path)) continue;
      const exported = barrelNames(room);
      for (const name of namesOf(node)) {
        if (name === '*' || !exported.has(name)) found.push(`src/${relative(srcDir, file).split(sep).join('/')} -> src/${room}/${path}: ${name}`);
      }
    }
  }
  return found.sort();
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the side-door check by name', () => {
  it('refuses a name the room\'s barrel does not export, even through a file the barrel re-exports (planted)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'barrel-names-'));
    dirs.push(dir);
    const files: Record<string, string> = {
      'workqueue/index.ts': "export { queue } from './metrics.js';\n",
      'workqueue/metrics.ts': 'export const queue = 1;\nexport const hidden = 2;\n',
      'controller/scheduler.ts': "import { queue, hidden } from '../workqueue/metrics.js';\nimport * as all from '../workqueue/metrics.js';\nexport const s = queue + hidden + all.queue;\n",
      'controller/ok.ts': "import { queue } from '../workqueue/index.js';\nimport { queue as q } from '../workqueue/metrics.js';\nimport { generate } from '../crd/cli.js';\nexport const ok = queue + q + generate;\n",
      'operations/index.ts': "export { hidden } from '../workqueue/metrics.js';\n",
      'crd/index.ts': 'export const define = 1;\n',
      'crd/cli.ts': 'export const generate = 1;\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
      writeFileSync(join(dir, 'src', path), text);
    }
    expect(sideDoorNames(join(dir, 'src'))).toEqual([
      'src/controller/scheduler.ts -> src/workqueue/metrics.ts: *',
      'src/controller/scheduler.ts -> src/workqueue/metrics.ts: hidden',
      'src/operations/index.ts -> src/workqueue/metrics.ts: hidden',
    ]);
  });

  it('src/ imports across rooms only names the rooms\' barrels export', () => {
    expect(sideDoorNames(join(root, 'src'))).toEqual([]);
  }, 60_000);
});
