// Type-checks doc snippets as one TypeScript program, against the package's entry points.
//
// Each snippet becomes an in-memory module beside this file. `kube-informer` and its subpaths resolve
// to their sources through `paths` read from package.json's `exports` (`./dist/x/index.js` →
// `./src/x/index.ts`): the names a user imports, with no build. The options are tsconfig.json's
// (`strict`), so a snippet compiles here as it would in a strict project of the user's.

import { dirname, join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Snippet } from './snippets.js';

/** The repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** One compile error, at the snippet's place in its markdown file. */
export interface SnippetError {
  file: string;
  line: number;
  message: string;
}

/** The result of {@link compileSnippets}. */
export interface CompileResult {
  /** Snippets compiled (not skipped). */
  compiled: number;
  /** Snippets skipped, with their reasons. */
  skipped: Snippet[];
  /** Every error, in file and line order. */
  errors: SnippetError[];
}

/** `paths` for every `exports` entry of package.json: the import specifier → its source file. */
export function entryPointPaths(root = repoRoot): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  const paths: Record<string, string[]> = {};
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const js = typeof target === 'object' && target !== null ? (target as { default?: unknown }).default : undefined;
    if (typeof js !== 'string' || !js.startsWith('./dist/')) continue;
    paths[sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`] = [js.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts')];
  }
  return paths;
}

interface Segment {
  snippet: Snippet;
  /** The module's line (0-based) where this part starts. */
  firstLine: number;
  /** The snippet's own code, or its `given` declarations. */
  part: 'code' | 'given';
}

interface Module {
  path: string;
  text: string;
  /** The parts in order: the snippets it continues, then its own `given` and code. */
  segments: Segment[];
}

function modulesOf(snippets: readonly Snippet[], dir: string): { modules: Module[]; errors: SnippetError[] } {
  const named = new Map<string, Snippet>();
  const errors: SnippetError[] = [];
  for (const s of snippets) if (s.name !== undefined) named.set(`${s.file}#${s.name}`, s);
  const modules: Module[] = [];
  for (const s of snippets) {
    if (s.skip !== undefined) continue;
    const chain: Snippet[] = [s];
    for (let at = s; at.after !== undefined; ) {
      const prev = named.get(`${at.file}#${at.after}`);
      if (prev === undefined || chain.includes(prev) || prev.line > at.line) {
        errors.push({ file: s.file, line: s.line, message: `snippet directive "after ${at.after}": no snippet named ${at.after} before it in ${s.file}` });
        break;
      }
      chain.unshift(prev);
      at = prev;
    }
    const segments: Segment[] = [];
    let text = '';
    let line = 0;
    for (const snippet of chain) {
      for (const part of ['given', 'code'] as const) {
        const code = part === 'code' ? snippet.code : snippet.given;
        if (code === undefined) continue;
        segments.push({ snippet, firstLine: line, part });
        text += `${code}\n`;
        line += code.split('\n').length;
      }
    }
    const name = `${s.file.replace(/[^\w.-]/g, '_')}.L${s.line}.snippet.ts`;
    modules.push({ path: join(dir, name), text: `${text}export {};\n`, segments });
  }
  return { modules, errors };
}

/** Where a module's line is in its markdown file; `undefined` when it is in a snippet this one continues. */
function placeOf(m: Module, line: number): { file: string; line: number; prefix: string } | undefined {
  let seg = m.segments[0]!;
  for (const s of m.segments) if (s.firstLine <= line) seg = s;
  const own = m.segments[m.segments.length - 1]!.snippet;
  if (seg.snippet !== own) return undefined;
  if (seg.part === 'given') return { file: own.file, line: own.line - 1, prefix: 'in the snippet\'s given declarations: ' };
  return { file: own.file, line: own.line + Math.min(line - seg.firstLine, own.code.split('\n').length - 1), prefix: '' };
}

/**
 * Compiles every snippet not skipped as one program (one module per snippet; a snippet marked
 * `after <id>` is compiled with the named snippet's code before its own). Errors are placed at the
 * markdown file's line.
 */
export function compileSnippets(snippets: readonly Snippet[], root = repoRoot): CompileResult {
  const dir = join(root, 'test/docs');
  const { modules, errors } = modulesOf(snippets, dir);
  const config = ts.parseJsonConfigFileContent(
    { extends: './tsconfig.json', compilerOptions: { paths: entryPointPaths(root), moduleDetection: 'force', noEmit: true }, files: [] },
    ts.sys,
    root,
  );
  const options = config.options;
  const byPath = new Map(modules.map((m) => [m.path, m]));
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const own = byPath.get(resolve(fileName));
    return own !== undefined ? ts.createSourceFile(fileName, own.text, languageVersion, true) : getSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => byPath.has(resolve(fileName)) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => byPath.get(resolve(fileName))?.text ?? readFile(fileName);
  const program = ts.createProgram({ rootNames: modules.map((m) => m.path), options, host });
  for (const d of program.getOptionsDiagnostics()) errors.push({ file: 'tsconfig.json', line: 0, message: flatten(d) });
  for (const m of modules) {
    const sf = program.getSourceFile(m.path);
    if (sf === undefined) throw new Error(`${m.path}: not in the program`);
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      const place = placeOf(m, d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line);
      if (place !== undefined) errors.push({ file: place.file, line: place.line, message: place.prefix + flatten(d) });
    }
  }
  errors.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { compiled: modules.length, skipped: snippets.filter((s) => s.skip !== undefined), errors };
}

function flatten(d: ts.Diagnostic): string {
  return `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
}

/** `file:line: TSnnnn: message`, one per line. */
export function formatErrors(errors: readonly SnippetError[]): string {
  return errors.map((e) => `${e.file}:${e.line}: ${e.message}`).join('\n');
}
