// No name exported twice (issue 47): every exported name, value or type, has one home among the
// package's entry points (package.json "exports"). The names are read from the entry points' sources
// with the TypeScript compiler, as a user's editor sees them.

import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPointPaths, repoRoot } from '../docs/compile.js';

/** Entry point specifier → the names it exports. */
function exportedNames(entries: Record<string, string>): Map<string, string[]> {
  const program = ts.createProgram(Object.values(entries), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [specifier, file] of Object.entries(entries)) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`entry point ${specifier}: ${file} not found`);
    const symbol = checker.getSymbolAtLocation(source);
    names.set(specifier, symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name));
  }
  return names;
}

/** Every name exported by more than one entry point, as `name: a, b`. */
export function exportedTwice(names: ReadonlyMap<string, readonly string[]>): string[] {
  const homes = new Map<string, string[]>();
  for (const [entry, list] of names) for (const name of list) homes.set(name, [...(homes.get(name) ?? []), entry]);
  return [...homes].filter(([, at]) => at.length > 1).map(([name, at]) => `${name}: ${at.join(', ')}`).sort();
}

describe('one home for every exported name', () => {
  it('finds a name two entry points export (planted)', () => {
    expect(exportedTwice(new Map([['kube-informer', ['A', 'B']], ['kube-informer/cache', ['B', 'C']], ['kube-informer/x', ['C']]]))).toEqual([
      'B: kube-informer, kube-informer/cache',
      'C: kube-informer/cache, kube-informer/x',
    ]);
  });

  it('no entry point of package.json exports a name another one exports', () => {
    const entries = Object.fromEntries(Object.entries(entryPointPaths()).map(([k, [file]]) => [k, join(repoRoot, file)]));
    const names = exportedNames(entries);
    expect(names.get('kube-informer')).toContain('SharedInformerFactory');
    expect(names.get('kube-informer/cache')).toContain('Reflector');
    expect(exportedTwice(names)).toEqual([]);
  }, 60_000);
});
